/**
 * `npm run bench:profile`: where a worker's CPU goes in a search turn. One API and one worker
 * (projections in the same process, as the default deployment runs them) under `node --cpu-prof`,
 * the fake Messages API answering each turn with one search_book call and then a text answer.
 * The worker is warmed with WARM turns of one conversation, then FRESH conversations each get one
 * turn (turn 1: the issue's "search turn at turn 1", on a warm process), timed by the worker's
 * CPU from /proc. The profile, cut to those turns, is summarised by package and by function
 * (bench/cpu-profile.ts) and left in bench/results/prof/ for Chrome DevTools.
 *
 *   npm run bench:profile -- [--fresh 60] [--warm 20] [--no-prof] [--scripted]
 * (--scripted: the scripted model and no book, the one-call turn of the turn-overhead row)
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../libs/platform/src/project-root';
import { FakeAnthropic } from '../test/support/fake-anthropic/fake-anthropic.server';
import { fakeAnthropicEnv } from '../test/support/stack';
import { waitFor } from '../test/support/wait-for';
import { aliceQuestions, uploadAlice } from './alice';
import { summariseCpuProfile } from './cpu-profile';
import { add } from './report';
import { runStandalone } from './standalone';
import { benchClient, liveConversation, withStack } from './service';
import { argValue, cpuMs, fmt, mean, pct } from './util';

const ROOT = projectRoot(__dirname);
const PROF_DIR = path.join(ROOT, 'bench/results/prof');

export async function profileTurns(opts: {
  fresh: number;
  warm: number;
  profile: boolean;
  /** the scripted model and no book: a one-call turn, the turn-overhead row's turn */
  scripted?: boolean;
}): Promise<void> {
  const fake = await FakeAnthropic.start();
  rmSync(PROF_DIR, { recursive: true, force: true });
  mkdirSync(PROF_DIR, { recursive: true });
  const cpu: number[] = [];
  let workerPid = 0;
  let apiPid = 0;
  let roundTrips: Array<{ name: string } & RoundTrips> = [];
  const window = { fromUs: 0, toUs: 0 };
  const nowUs = () => Number(process.hrtime.bigint() / 1000n);
  try {
    await withStack(
      {
        apis: 1,
        workers: 1,
        nodeArgs: [
          ...(opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`] : []),
          '-r',
          path.join(ROOT, 'dist/bench/trace-round-trips.js'),
        ],
        env: {
          ...(opts.scripted ? { LLM_PROVIDER: 'scripted' } : fakeAnthropicEnv(fake.url)),
          TRACE_ROUND_TRIPS_FILE: path.join(PROF_DIR, 'round-trips'),
        },
      },
      async (stack) => {
        workerPid = stack.workers[0].child.pid!;
        apiPid = stack.apis[0].child.pid!;
        const reader = benchClient(stack);
        const bookId = opts.scripted ? undefined : await uploadAlice(reader);
        const qs = opts.scripted ? ['a question for the scripted model'] : aliceQuestions();
        const warm = await liveConversation(reader, bookId);
        for (let t = 0; t < opts.warm; t++) await warm.turn(qs[t % qs.length]);
        warm.close();
        const processes = [...stack.apis, ...stack.workers].map((p) => p.child);
        await markRoundTrips(processes, 0);
        window.fromUs = nowUs();
        // scripted: every turn on one conversation, as the turn-overhead row takes them
        const one = opts.scripted ? await liveConversation(reader) : undefined;
        for (let i = 0; i < opts.fresh; i++) {
          const conv = one ?? (await liveConversation(reader, bookId));
          const c0 = cpuMs(workerPid);
          const r = await conv.turn(qs[i % qs.length]);
          cpu.push(cpuMs(workerPid) - c0);
          if (!one) conv.close();
          if (r.type !== 'AssistantReplied') throw new Error(`turn ended ${r.type}`);
        }
        one?.close();
        window.toUs = nowUs();
        await markRoundTrips(processes, 1);
        roundTrips = processes.map((p, i) => ({
          name: i < stack.apis.length ? `api${i}` : `worker${i - stack.apis.length}`,
          ...roundTripsBetween(p.pid!, 0, 1),
        }));
      },
    );
  } finally {
    await fake.close();
  }
  add({
    section: 'profile',
    figure: `worker CPU per ${opts.scripted ? 'scripted one-call' : 'search'} turn${opts.scripted ? `, ${cpu.length} on one conversation` : ` at turn 1 (warm worker, ${cpu.length} new conversations`}, /proc at 10 ms ticks)`,
    value: `mean ${fmt(mean(cpu), 1)} ms, p50 ${fmt(pct(cpu, 0.5), 1)} ms, p90 ${fmt(pct(cpu, 0.9), 1)} ms`,
    n: mean(cpu),
    goal: '≤ 10 ms',
    ok: mean(cpu) <= 10,
  });
  const per = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0) / cpu.length;
  for (const kind of ['statements', 'commands'] as const)
    add({
      section: 'profile',
      figure: `${kind === 'statements' ? 'Postgres statements' : 'Redis commands (round trips)'} per ${opts.scripted ? 'one-call' : 'search'} turn at turn 1`,
      value: roundTrips.map((p) => `${p.name} ${fmt(per(p[kind]), 1)}`).join(', '),
      n: roundTrips.reduce((sum, p) => sum + per(p[kind]), 0),
    });
  for (const p of roundTrips) console.log(`\n${p.name}: round trips per turn\n${describeRoundTrips(p, cpu.length)}`);
  if (!opts.profile) return;
  for (const [name, pid] of [
    ['worker', workerPid],
    ['API', apiPid],
  ] as const) {
    const file = readdirSync(PROF_DIR).find((f) => f.includes(`.${pid}.`) && f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no profile of the ${name} (pid ${pid}) in ${PROF_DIR}`);
    console.log(`\n${name} profile: ${path.join(PROF_DIR, file)}; the fresh conversations' turns:\n`);
    const profile = JSON.parse(readFileSync(path.join(PROF_DIR, file), 'utf8'));
    console.log(summariseCpuProfile(profile, 30, window));
  }
  console.log(`per turn: divide by ${cpu.length}`);
}

interface RoundTrips {
  statements: Record<string, number>;
  commands: Record<string, number>;
}

const roundTripsFile = (pid: number, mark: number) => path.join(PROF_DIR, `round-trips.${pid}.${mark}.json`);

/** Asks each process (preloaded with trace-round-trips) to write its counts so far. */
async function markRoundTrips(processes: ChildProcess[], mark: number): Promise<void> {
  for (const p of processes) p.kill('SIGUSR2');
  await waitFor('round-trip counts', () => processes.every((p) => existsSync(roundTripsFile(p.pid!, mark))), 10_000);
}

function roundTripsBetween(pid: number, from: number, to: number): RoundTrips {
  const read = (m: number): RoundTrips => JSON.parse(readFileSync(roundTripsFile(pid, m), 'utf8'));
  const a = read(from);
  const b = read(to);
  const diff = (x: Record<string, number>, y: Record<string, number>) =>
    Object.fromEntries(
      Object.entries(y)
        .map(([k, n]) => [k, n - (x[k] ?? 0)] as const)
        .filter(([, n]) => n > 0),
    );
  return { statements: diff(a.statements, b.statements), commands: diff(a.commands, b.commands) };
}

function describeRoundTrips(r: RoundTrips, turns: number): string {
  const lines = (m: Record<string, number>) =>
    Object.entries(m)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `  ${fmt(n / turns, 2).padStart(6)}  ${k}`);
  const total = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0) / turns;
  return [
    `Postgres statements: ${fmt(total(r.statements), 1)}`,
    ...lines(r.statements),
    `Redis commands: ${fmt(total(r.commands), 1)}`,
    ...lines(r.commands),
  ].join('\n');
}

if (require.main === module) {
  void runStandalone(() =>
    profileTurns({
      fresh: Number(argValue('fresh') ?? 60),
      warm: Number(argValue('warm') ?? 20),
      profile: !process.argv.includes('--no-prof'),
      scripted: process.argv.includes('--scripted'),
    }),
  );
}
