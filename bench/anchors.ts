/**
 * Figure 1, the anchors: raw single-row INSERT throughput into `events` (the migrated table, in a
 * private database) with pgbench, 1 and 16 clients, and the same INSERT with pg_notify in the
 * transaction. Every ratio of the run is to these numbers from the same run.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createTestDatabase } from '../test/support/test-database';
import { add, anchors } from './report';
import { fmt, secs } from './util';

const run = promisify(execFile);
const PAYLOAD = JSON.stringify({ text: 'x'.repeat(200) });

const INSERT = `INSERT INTO events (event_id, stream_id, version, type, data) VALUES (gen_random_uuid(), 'pgb-' || gen_random_uuid(), 1, 'Bench', '${PAYLOAD}');`;

async function pgbench(url: string, script: string, clients: number, seconds: number): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-pgbench-'));
  try {
    const file = path.join(dir, 'script.sql');
    writeFileSync(file, script + '\n');
    const { stdout } = await run(
      '/usr/bin/pgbench',
      ['-n', '-f', file, '-c', String(clients), '-j', String(Math.min(clients, 2)), '-T', String(seconds), url],
      { maxBuffer: 10_000_000 },
    );
    const m = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout);
    if (!m) throw new Error(`pgbench printed no tps:\n${stdout}`);
    return Number(m[1]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function anchorsBench(): Promise<void> {
  const db = await createTestDatabase();
  try {
    await db.pool.end();
    const T = secs(10, 3);
    const withNotify = `BEGIN;\n${INSERT}\nSELECT pg_notify('parley_bench', 'x');\nCOMMIT;`;
    for (const c of [1, 16]) {
      const tps = await pgbench(db.url, INSERT, c, T);
      anchors[`insert_c${c}`] = tps;
      add({ section: 'anchors', figure: `pgbench INSERT into events, -c ${c}`, value: `${fmt(tps, 0)} tps`, n: tps });
      const tpsN = await pgbench(db.url, withNotify, c, T);
      anchors[`insert_notify_c${c}`] = tpsN;
      add({
        section: 'anchors',
        figure: `pgbench INSERT + pg_notify, -c ${c}`,
        value: `${fmt(tpsN, 0)} tps`,
        n: tpsN,
        anchor: `${fmt(tps, 0)} tps INSERT`,
        ratio: tpsN / tps,
      });
    }
  } finally {
    await db.drop();
  }
}
