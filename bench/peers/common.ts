import { Client } from 'pg';
import { mean } from '../util';

import { aliceQuestions } from '../alice';

export { ALICE_PASSAGE as PASSAGE } from '../alice';
const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface PeerResult {
  cpuMsPerTurn: number;
  statementsPerTurn: number;
  statements: Record<string, number>;
  turns: number;
}

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * A database of the run's own, dropped afterwards (admin statements happen outside the measured
 * window). Not with FORCE: a peer's library may keep an idle pool after its shutdown, and a pool
 * whose connection is killed emits an error nobody listens to, which ends this process. A
 * database still in use after a few seconds is left for the next run to drop.
 */
export async function withPrivateDb<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const name = `peers_${Math.random().toString(36).slice(2, 10)}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  try {
    return await fn(`postgres://postgres@127.0.0.1:5432/${name}`);
  } finally {
    await admin(async (c) => {
      for (let attempt = 0; attempt < 30; attempt++) {
        const dropped = await c.query(`DROP DATABASE IF EXISTS ${name}`).then(
          () => true,
          () => false, // "is being accessed by other users"
        );
        if (dropped) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      console.warn(`  (database ${name} is still in use: the next peers run drops it)`);
    });
  }
}

/** Drops the databases earlier runs left (called before any peer opens a connection). */
export async function dropLeftoverDatabases(): Promise<void> {
  await admin(async (c) => {
    const { rows } = await c.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE 'peers\\_%'`,
    );
    for (const { datname } of rows) await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  });
}

function diff(after: Record<string, number>, before: Record<string, number>, n: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d) out[k] = d / n;
  }
  return out;
}

/** Runs `turns` turns; CPU is the mean of turns 11.. and statements are per turn over the same window. */
export async function measureTurns(
  turns: number,
  turn: (question: string) => Promise<void>,
  counts: () => { statements: Record<string, number> },
  warmup = 10,
): Promise<PeerResult> {
  const qs = aliceQuestions();
  const cpu: number[] = [];
  let before: Record<string, number> = {};
  for (let t = 0; t < turns; t++) {
    if (t === warmup) before = { ...counts().statements };
    const c0 = process.cpuUsage();
    await turn(qs[t % qs.length]);
    const d = process.cpuUsage(c0);
    cpu.push((d.user + d.system) / 1000);
  }
  const n = turns - warmup;
  const statements = diff(counts().statements, before, n);
  const statementsPerTurn = Object.values(statements).reduce((a, b) => a + b, 0);
  return { cpuMsPerTurn: mean(cpu.slice(warmup)), statementsPerTurn, statements, turns: n };
}
