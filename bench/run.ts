/**
 * `npm run bench`: every figure of the two performance issues, each next to its anchor from the
 * same run, on this machine's Postgres and Redis. Runs the sections in order, prints one table
 * (figure | value | anchor | ratio | goal) and writes bench/results/<iso-date>.json.
 *
 *   BENCH_ONLY=anchors,event-store   only these sections (names below)
 *   --quick (or BENCH_QUICK=1)       short phases, for a smoke test of the harness
 *   LONG_TURNS=200                   turns of the long conversation (default 500)
 *   SOAK_MINUTES=2                   minutes of the soak inside `npm run bench` (default 2)
 *   SSE_CLIENTS=500                  clients of the SSE fan-out
 * Sections that fail are reported and the run goes on; the exit code is then 1.
 */
import os from 'node:os';
import path from 'node:path';
import globalSetup from '../test/support/global-setup';
import globalTeardown from '../test/support/global-teardown';
import { anchorsBench } from './anchors';
import { erasureBench } from './erasure';
import { eventStoreBench, rebuildBench } from './event-store';
import { floorBench } from './floor';
import { historyCacheBench, reportHistoryCache } from './history-cache';
import { longConversationBench } from './long-conversation';
import { profileTurns } from './profile-turns';
import { footprintSection } from './turn-footprint';
import { add, errors, printTable, writeJson } from './report';
import { bareFanoutBench, sseFanoutBench } from './sse-fanout';
import { soakBench } from './soak';
import { tracingBench } from './tracing';
import { turnStagesBench } from './turn-stages';
import { agentOffBench, crashBench, postsWithTurnsBench, scriptedTurnsBench, workerScalingBench } from './turns';
import { onAbort, QUICK } from './util';

export interface RunOptions {
  soakMinutes?: number;
  heapSnapshotsAt?: number[];
  allocator?: 'jemalloc' | 'glibc';
  longTurns?: number;
  sseClients?: number;
}

/** Subscribers on one conversation, then the same number over a hundredth as many conversations. */
async function sseFanOut(clients: number): Promise<void> {
  const rounds = QUICK ? 2 : 5;
  // the machine's own limit: node:http alone writing the same frame to as many streams
  const bare = await bareFanoutBench({ clients, rounds });
  add({
    section: 'sse',
    figure: `anchor: node:http alone, one frame to ${clients.toLocaleString('en')} SSE streams`,
    value: `p50 ${bare.p50Ms.toFixed(0)} ms, p99 ${bare.p99Ms.toFixed(0)} ms`,
    n: bare.p99Ms,
  });
  for (const conversations of [1, Math.max(1, Math.round(clients / 10))]) {
    const r = await sseFanoutBench({ clients, conversations, rounds });
    const where = `${clients.toLocaleString('en')} subscribers on ${conversations.toLocaleString('en')} conversation(s)`;
    add({
      section: 'sse',
      figure: `fan-out, ${where}: rename → seen by all`,
      value: `p50 ${r.p50Ms.toFixed(0)} ms, p99 ${r.p99Ms.toFixed(0)} ms`,
      n: r.p99Ms,
      anchor: `node:http alone p99 ${bare.p99Ms.toFixed(0)} ms`,
      ratio: r.p99Ms / bare.p99Ms,
      goal: 'p99 ≤ 200 ms',
      ok: r.p99Ms <= 200,
    });
    add({
      section: 'sse',
      figure: `API RSS with ${where}`,
      value: `${r.apiRssMb.toFixed(0)} MB (peak ${r.apiPeakRssMb.toFixed(0)} MB)`,
      n: r.apiRssMb,
      goal: '≤ 500 MiB',
      ok: r.apiPeakRssMb <= 500 * 1.048576,
    });
    add({
      section: 'sse',
      figure: `idle Postgres transactions/s with ${where}`,
      value: `${r.idleTransactionsPerSecond.toFixed(1)}/s`,
      n: r.idleTransactionsPerSecond,
      anchor: `${r.baselineTransactionsPerSecond.toFixed(1)}/s with no stream open`,
    });
  }
}

export const SECTIONS: Record<string, (o: RunOptions) => Promise<void>> = {
  anchors: () => anchorsBench(),
  'event-store': () => eventStoreBench(),
  floor: () => floorBench(),
  turns: () => scriptedTurnsBench(),
  posts: () => postsWithTurnsBench(),
  stages: () => turnStagesBench(),
  tracing: () => tracingBench(),
  'agent-off': () => agentOffBench(),
  rebuild: () => rebuildBench(),
  erasure: () => erasureBench(),
  scaling: () => workerScalingBench(),
  crash: () => crashBench(),
  // loaded only here: it patches pg in this process to count the peers' statements
  peers: async () => (await import('./peers/run-peers')).peersBench(),
  profile: () => profileTurns({ fresh: QUICK ? 10 : 60, warm: QUICK ? 5 : 20, profile: false }),
  footprint: () => footprintSection({ warm: QUICK ? 2 : 3, turn: 2, repeat: QUICK ? 3 : 5 }),
  'long-conversation': (o) => longConversationBench(o.longTurns ?? (QUICK ? 30 : 500)),
  'history-cache': async () => reportHistoryCache(await historyCacheBench(30, 10_000)),
  'sse-fanout': (o) => sseFanOut(o.sseClients ?? (QUICK ? 500 : 10_000)),
  soak: (o) =>
    soakBench({
      minutes: o.soakMinutes ?? (QUICK ? 0.5 : 2),
      heapSnapshotsAt: o.heapSnapshotsAt,
      allocator: o.allocator,
    }),
};

export async function runMain(names: string[], o: RunOptions): Promise<void> {
  const unknown = names.filter((n) => !SECTIONS[n]);
  if (unknown.length)
    throw new Error(`unknown section(s) ${unknown.join(', ')}; known: ${Object.keys(SECTIONS).join(', ')}`);
  const started = new Date();
  // Ctrl-C or SIGTERM: stop the running stacks' processes, drop this run's databases, exit.
  const abort = (signal: string) => {
    console.error(`${signal}: stopping processes and dropping this run's databases`);
    const timeout = new Promise((r) => setTimeout(r, 20_000).unref());
    void Promise.race([
      (async () => {
        await Promise.all([...onAbort].map((stop) => stop().catch(() => undefined)));
        await globalTeardown().catch(() => undefined);
      })(),
      timeout,
    ]).then(() => process.exit(130));
  };
  process.once('SIGINT', () => abort('SIGINT'));
  process.once('SIGTERM', () => abort('SIGTERM'));
  let code = 0;
  await globalSetup();
  try {
    console.log(
      `parley bench — ${started.toISOString()}${QUICK ? ' (quick)' : ''}; load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    for (const name of names) {
      console.log(`\n== ${name}`);
      const t = performance.now();
      try {
        await SECTIONS[name](o);
      } catch (e) {
        errors.push({ section: name, error: String((e as Error)?.stack ?? e) });
        console.error(`section ${name} failed:`, e);
        code = 1;
      }
      console.log(`   (${((performance.now() - t) / 1000).toFixed(0)} s)`);
    }
  } finally {
    await globalTeardown().catch((e) => console.error('teardown:', e));
  }
  printTable();
  const file = writeJson(
    {
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      quick: QUICK,
      sections: names,
      options: o,
      machine: { cpus: os.cpus().length, loadavgAtEnd: os.loadavg(), node: process.version },
    },
    started.toISOString(),
  );
  console.log(`\nwritten ${path.relative(process.cwd(), file)}`);
  process.exit(code);
}

if (require.main === module) {
  const only = process.env.BENCH_ONLY?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const all = Object.keys(SECTIONS);
  runMain(only?.length ? only : all, {
    soakMinutes: process.env.SOAK_MINUTES ? Number(process.env.SOAK_MINUTES) : undefined,
    longTurns: process.env.LONG_TURNS ? Number(process.env.LONG_TURNS) : undefined,
    sseClients: process.env.SSE_CLIENTS ? Number(process.env.SSE_CLIENTS) : undefined,
  }).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
