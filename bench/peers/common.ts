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

/** A database of the run's own, dropped afterwards (admin statements happen outside the measured window). */
export async function withPrivateDb<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const name = `peers_${Math.random().toString(36).slice(2, 10)}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  try {
    return await fn(`postgres://postgres@127.0.0.1:5432/${name}`);
  } finally {
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
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
