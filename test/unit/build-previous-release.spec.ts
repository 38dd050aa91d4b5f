import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const SCRIPT = path.resolve(__dirname, '../../scripts/build-previous-release.mjs');

/** npm test's pretest in a clone without the previous release's commit (a shallow clone's case). */
describe('scripts/build-previous-release.mjs', () => {
  let clone: string;
  beforeAll(() => {
    clone = mkdtempSync(path.join(tmpdir(), 'parley-shallow-'));
    mkdirSync(path.join(clone, 'scripts'));
    copyFileSync(SCRIPT, path.join(clone, 'scripts/build-previous-release.mjs'));
    const git = (...args: string[]) => execFileSync('git', ['-C', clone, ...args], { stdio: 'ignore' });
    git('init', '-q');
    git('add', '.');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'one commit, no history');
  });
  afterAll(() => rmSync(clone, { recursive: true, force: true }));

  it('says in one message how to fetch the history, with no stack trace', () => {
    const run = spawnSync(process.execPath, [path.join(clone, 'scripts/build-previous-release.mjs')], {
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('git fetch --unshallow');
    expect(run.stderr).toMatch(/the previous release, \d+\.\d+\.\d+ \(commit [0-9a-f]{12}\)/);
    expect(run.stderr).not.toMatch(/^\s+at /m);
  });
});
