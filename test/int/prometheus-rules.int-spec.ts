import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { requireBinary } from '../support/prometheus';

const DEPLOY = path.join(__dirname, '../../deploy/prometheus');

/** Runs promtool; its output goes into the failure message. */
function promtool(...args: string[]): { status: number | null; output: string } {
  const r = spawnSync(requireBinary('promtool'), args, { cwd: DEPLOY, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}${r.error ? String(r.error) : ''}` };
}

/** deploy/prometheus as Prometheus reads it: the rules, their unit tests, the scrape config. */
describe('deploy/prometheus (promtool)', () => {
  it.each([
    ['check rules', ['check', 'rules', 'alerts.yml']],
    ['test rules', ['test', 'rules', 'alerts.test.yml']],
    ['check config', ['check', 'config', 'prometheus.yml']],
  ])('promtool %s passes', (_, args) => {
    const { status, output } = promtool(...args);
    expect({ status, output }).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
  });

  it('gives every alert a severity, a summary, a description and a runbook in docs/metrics.md', () => {
    const text = readFileSync(path.join(DEPLOY, 'alerts.yml'), 'utf8');
    const docs = readFileSync(path.join(__dirname, '../../docs/metrics.md'), 'utf8');
    const alerts = text.split(/\n\s+- alert: /).slice(1);
    expect(alerts.length).toBeGreaterThan(0);
    for (const rule of alerts) {
      const name = rule.split('\n')[0].trim();
      expect({ name, severity: /severity: (critical|warning|info)\n/.test(rule) }).toEqual({ name, severity: true });
      for (const key of ['summary', 'description', 'runbook_url'])
        expect({ name, key, present: rule.includes(`${key}: `) }).toEqual({ name, key, present: true });
      // the runbook anchor is the alert's own section of docs/metrics.md
      expect(rule).toContain(`runbook_url: "docs/metrics.md#${name.toLowerCase()}"`);
      expect(docs).toContain(`### ${name}`);
    }
  });
});
