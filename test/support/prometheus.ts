/**
 * Debian's real Prometheus (`apt-get install prometheus`; .ci/run installs it), started on a
 * temporary config and data directory, scraping the given targets every second.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './stack';
import { waitFor } from './wait-for';

/** The binary's path, or a failure that says how to get it. */
export function requireBinary(name: 'prometheus' | 'promtool'): string {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  if (!found) throw new Error(`${name} is not installed: apt-get install prometheus (.ci/run does)`);
  return found;
}

export interface Prometheus {
  base: string;
  /** scrape targets by job, as /api/v1/targets reports them */
  targets(): Promise<Array<{ job: string; health: string; lastError: string }>>;
  /** an instant query's vector: labels and value of each sample */
  query(promql: string): Promise<Array<{ metric: Record<string, string>; value: number }>>;
  stop(): Promise<void>;
}

export async function startPrometheus(jobs: Record<string, string[]>): Promise<Prometheus> {
  const bin = requireBinary('prometheus');
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-prometheus-'));
  const scrapes = Object.entries(jobs)
    .map(
      ([job, targets]) =>
        `  - job_name: ${job}\n    static_configs:\n      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`,
    )
    .join('\n');
  writeFileSync(
    path.join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nscrape_configs:\n${scrapes}\n`,
  );
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(
    bin,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (d: Buffer) => (output = (output + d.toString()).slice(-20_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const api = async <T>(p: string): Promise<T> => {
    const res = await fetch(`${base}${p}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${p}: ${body.error ?? res.status}`);
    return body.data;
  };
  const prometheus: Prometheus = {
    base,
    targets: async () =>
      (
        await api<{ activeTargets: Array<{ labels: { job: string }; health: string; lastError: string }> }>(
          '/api/v1/targets',
        )
      ).activeTargets.map((t) => ({ job: t.labels.job, health: t.health, lastError: t.lastError })),
    query: async (promql) =>
      (
        await api<{ result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(
          `/api/v1/query?query=${encodeURIComponent(promql)}`,
        )
      ).result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) })),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await waitFor(
    'prometheus to be ready',
    async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited:\n${output}`);
      return (await fetch(`${base}/-/ready`).catch(() => undefined))?.ok;
    },
    30_000,
    100,
  ).catch(async (e) => {
    await prometheus.stop();
    throw e;
  });
  return prometheus;
}
