/**
 * `npm run bench:footprint`: which of Parley's source files a turn really runs, for the walk of
 * docs/architecture.md ("One turn, file by file"). One API and one worker (projections in it, as
 * deployed) under `--inspect`, the fake Messages API as the model. Over the inspector, V8's
 * precise coverage (call counts per function) runs from the start; warm-up conversations of each
 * kind of turn go first, so lazy initialisation is not counted. Then, for each measured turn, the
 * counts are taken (and so reset), the turn runs, and they are taken again once its
 * AssistantReplied is on the conversation's SSE stream, the read model has it and its BullMQ job
 * is completed: a source file ran when one of its functions was called in that window. Several
 * turns are measured, each alone, and a file counts when it ran in every one, so a timer that
 * fired during one (the sweepers, the polls) is not taken for the turn. Two kinds of turn:
 * `search` (the fake calls search_book, then answers) and `whole-book` (policy retrievalMode
 * whole-book: the book goes as cited documents). Each kind's list (lines, process, file) goes to
 * bench/results/turn-footprint-<kind>.txt.
 *
 *   npm run bench:footprint -- [--warm 3] [--turn 2] [--repeat 5]
 * `--turn n`: each measured turn is the n-th of its conversation (2: a turn with one before it).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Queue } from 'bullmq';
import { runTurnJobId, AGENT_TURNS_QUEUE } from '../libs/agent/src/queue/turn-jobs';
import { projectRoot } from '../libs/platform/src/project-root';
import { defaultReply } from '../test/support/fake-anthropic/default-responder';
import { FakeAnthropic } from '../test/support/fake-anthropic/fake-anthropic.server';
import { newBook } from '../test/support/factories/books';
import { type Client, fakeAnthropicEnv, type Stack } from '../test/support/stack';
import { redisUrl } from '../test/support/test-database';
import { waitFor } from '../test/support/wait-for';
import { linesOf, onlyReExports, type ScriptCoverage, sourceFilesRun } from './coverage-files';
import { connectInspector, type InspectorSession, inspectorUrlOf } from './inspector-session';
import { add } from './report';
import { benchClient, newConversation, post, withStack } from './service';
import { runStandalone } from './standalone';
import { argValue, fmt, sleep, turnWatcher } from './util';

const ROOT = projectRoot(__dirname);
const RESULTS = path.join(ROOT, 'bench/results');
const TURN_TIMEOUT_MS = 60_000;
const IDLE_MS = 2_000;
const CHUNK_DELAY_MS = 10;

export type TurnKind = 'search' | 'whole-book';
const KINDS: Record<TurnKind, { policy?: Record<string, unknown>; question: string }> = {
  search: { question: 'Where did Marisol arrive, and what did the ferryman tell her?' },
  'whole-book': { policy: { retrievalMode: 'whole-book' }, question: 'What did Marisol find in the lamp room?' },
};

type ProcName = 'api' | 'worker';

export interface Footprint {
  kind: TurnKind;
  /** the measured turns, each in its own window */
  turns: number;
  /** source file → process → in how many of the turns' windows it ran there */
  runs: Map<string, Map<ProcName, number>>;
  /** per process, the files that ran in the idle window after the turns */
  idle: Map<ProcName, Set<string>>;
  /** files that ran but only re-export others (barrels): left out, like the modules */
  reExports: Set<string>;
  windowsMs: number[];
}

interface Measured {
  name: ProcName;
  session: InspectorSession;
}

export interface FootprintOptions {
  /** warm-up conversations of each kind, of `turn` turns each */
  warm: number;
  /** which turn of a conversation is measured */
  turn: number;
  /** how many such turns are measured, each alone in its window */
  repeat: number;
}

export async function turnFootprintBench(opts: FootprintOptions): Promise<Footprint[]> {
  // the reply streamed over time, as a model writes it: its text goes out as live deltas
  // (a reply that comes whole within DELTA_BATCH_MS is dropped for its AssistantReplied)
  const fake = await FakeAnthropic.start({
    defaultResponder: (req) => ({ ...defaultReply(req), delayMsPerChunk: CHUNK_DELAY_MS }),
  });
  const sessions: InspectorSession[] = [];
  try {
    return await withStack(
      {
        apis: 1,
        workers: 1,
        nodeArgs: ['--inspect=127.0.0.1:0'],
        // the polls at their default (the stack's 500 ms would land in more of the turns' windows)
        env: { ...fakeAnthropicEnv(fake.url), EVENT_POLL_MS: '1000' },
      },
      async (stack) => {
        const measured: Measured[] = [];
        for (const [name, proc] of [
          ['api', stack.apis[0]],
          ['worker', stack.workers[0]],
        ] as const) {
          const session = await connectInspector(await inspectorUrlOf(proc));
          sessions.push(session);
          await session.send('Profiler.enable');
          await session.send('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
          measured.push({ name, session });
        }
        const reader = benchClient(stack);
        const book = await newBook(reader);
        const queue = new Queue(AGENT_TURNS_QUEUE, {
          connection: { url: redisUrl(), maxRetriesPerRequest: null },
          prefix: stack.env.QUEUE_PREFIX,
        });
        try {
          const out: Footprint[] = [];
          for (const kind of Object.keys(KINDS) as TurnKind[])
            out.push(await measureKind({ kind, stack, reader, bookId: book.id, queue, measured, ...opts }));
          return out;
        } finally {
          await queue.close();
        }
      },
    );
  } finally {
    for (const s of sessions) s.close();
    await fake.close();
  }
}

async function measureKind(
  o: {
    kind: TurnKind;
    stack: Stack;
    reader: Client;
    bookId: string;
    queue: Queue;
    measured: Measured[];
  } & FootprintOptions,
): Promise<Footprint> {
  const { kind, stack, reader, measured } = o;
  const spec = KINDS[kind];
  const conversation = async () => {
    const id = await newConversation(reader, o.bookId);
    if (spec.policy) {
      const r = await reader.req('PATCH', `/v1/conversations/${id}`, { policy: spec.policy });
      if (r.status !== 200) throw new Error(`PATCH policy: ${r.status} ${r.text}`);
    }
    return { id, watcher: await turnWatcher(reader.base, reader.auth, id) };
  };
  /** Posts one turn and waits until the stream, the read model and the queue all say it is over. */
  const turn = async (c: Awaited<ReturnType<typeof conversation>>): Promise<string> => {
    const p = await post(reader, c.id, spec.question);
    if (p.status !== 202 || !p.turnId) throw new Error(`${kind} turn: POST message answered ${p.status}`);
    const turnId = p.turnId;
    const end = await c.watcher.waitReply(turnId, TURN_TIMEOUT_MS).catch(() => {
      throw new Error(
        `${kind} turn ${turnId} did not end within ${TURN_TIMEOUT_MS / 1000} s (no AssistantReplied, TurnFailed or ` +
          `TurnCancelled on its SSE stream); the worker's last output:\n${stack.workers[0].output().slice(-3_000)}`,
      );
    });
    if (end.type !== 'AssistantReplied') throw new Error(`${kind} turn ${turnId} ended ${end.type}`);
    // the projection writes the messages with the conversation's version, in one statement
    await waitFor(
      `the read model to show the ${kind} turn's reply (version ${end.version})`,
      async () =>
        (await stack.db.pool.query('SELECT 1 FROM conversations WHERE id = $1 AND version >= $2', [c.id, end.version]))
          .rowCount,
      TURN_TIMEOUT_MS,
    );
    await waitFor(
      `the ${kind} turn's job to complete`,
      async () => (await o.queue.getJobState(runTurnJobId(c.id, turnId))) === 'completed',
      TURN_TIMEOUT_MS,
    );
    return turnId;
  };

  for (let w = 0; w < o.warm; w++) {
    const c = await conversation();
    for (let t = 0; t < o.turn; t++) await turn(c);
    c.watcher.close();
  }
  const runs = new Map<string, Map<ProcName, number>>();
  const reExports = new Set<string>();
  const windowsMs: number[] = [];
  let idle = new Map<ProcName, Set<string>>();
  for (let r = 0; r < o.repeat; r++) {
    const c = await conversation();
    for (let t = 1; t < o.turn; t++) await turn(c);
    await takeCoverage(measured); // counts from zero
    const started = performance.now();
    const turnId = await turn(c);
    windowsMs.push(performance.now() - started);
    for (const [name, files] of await takeCoverage(measured))
      for (const f of files) {
        if (onlyReExports(ROOT, f)) reExports.add(f);
        else runs.set(f, (runs.get(f) ?? new Map()).set(name, (runs.get(f)?.get(name) ?? 0) + 1));
      }
    // outside the window: the reply as a client reads it, and that the turn was of its kind
    await checkKind(kind, reader, c.id, turnId);
    if (r === o.repeat - 1) {
      // what runs on its own meanwhile (timers, polls), the last conversation's stream still open
      await takeCoverage(measured);
      await sleep(IDLE_MS);
      idle = await takeCoverage(measured);
    }
    c.watcher.close();
  }
  return { kind, turns: o.repeat, runs, idle, reExports, windowsMs };
}

async function takeCoverage(measured: Measured[]): Promise<Map<ProcName, Set<string>>> {
  const out = new Map<ProcName, Set<string>>();
  for (const m of measured) {
    const { result } = await m.session.send<{ result: ScriptCoverage[] }>('Profiler.takePreciseCoverage');
    out.set(m.name, sourceFilesRun(result, ROOT));
  }
  return out;
}

/** GET …/messages shows the reply; a search turn called a tool, a whole-book turn cited and called none. */
async function checkKind(kind: TurnKind, reader: Client, conversationId: string, turnId: string): Promise<void> {
  const r = await reader.req('GET', `/v1/conversations/${conversationId}/messages?limit=100`);
  if (r.status !== 200) throw new Error(`GET messages: ${r.status} ${r.text}`);
  const mine = (
    r.body.items as Array<{ role: string; turnId: string; citations: unknown[]; toolInvocations: [] }>
  ).filter((m) => m.turnId === turnId);
  const reply = mine.filter((m) => m.role === 'assistant').at(-1);
  const searched = mine.some((m) => m.role === 'tool_result');
  if (!reply) throw new Error(`${kind} turn ${turnId}: no assistant message in GET …/messages`);
  if (kind === 'search' && !searched) throw new Error(`the search turn ${turnId} called no tool`);
  if (kind === 'whole-book' && (searched || !reply.citations.length))
    throw new Error(`the whole-book turn ${turnId} ${searched ? 'searched' : 'cited nothing'}: not a whole-book turn`);
}

interface Tally {
  files: number;
  lines: number;
}
function tally(files: string[]): Tally {
  return { files: files.length, lines: files.reduce((n, f) => n + (linesOf(ROOT, f) || 0), 0) };
}

/**
 * Writes bench/results/turn-footprint-<kind>.txt and adds the kind's row to the report. A file is
 * counted for a process when it ran there in every measured turn: a timer that fired in one
 * window is not the turn's.
 */
export function reportFootprint(fp: Footprint, opts: FootprintOptions): string {
  const everyTurn = (f: string, name: ProcName) => fp.runs.get(f)?.get(name) === fp.turns;
  const ran = [...fp.runs.keys()].sort();
  const by = (name: ProcName) => ran.filter((f) => everyTurn(f, name));
  const [api, worker] = [by('api'), by('worker')];
  const counted = ran.filter((f) => everyTurn(f, 'api') || everyTurn(f, 'worker'));
  const sometimes = ran.filter((f) => !counted.includes(f));
  const [a, w, u] = [tally(api), tally(worker), tally(counted)];
  const t = (x: Tally) => `${x.files} files, ${fmt(x.lines, 0)} lines`;
  const idleToo = (f: string) => [...fp.runs.get(f)!.keys()].some((name) => fp.idle.get(name)?.has(f));
  const missing = ran.filter((f) => Number.isNaN(linesOf(ROOT, f)));
  const buildInfo = path.join(ROOT, 'dist/build-info.json');
  const commit = existsSync(buildInfo) ? (JSON.parse(readFileSync(buildInfo, 'utf8')).commit ?? 'unknown') : 'unknown';
  const row = (f: string) => {
    const where = [...fp.runs.get(f)!].filter(([, n]) => n === fp.turns || !counted.includes(f));
    const proc = where.length === 2 ? 'both' : where[0][0];
    const times = Math.max(...where.map(([, n]) => n));
    return `${String(linesOf(ROOT, f)).padStart(5)}  ${proc.padEnd(6)}  ${times}/${fp.turns}  ${f}${idleToo(f) ? '  idle' : ''}`;
  };
  mkdirSync(RESULTS, { recursive: true });
  const file = path.join(RESULTS, `turn-footprint-${fp.kind}.txt`);
  writeFileSync(
    file,
    [
      `# The source files a ${fp.kind} turn runs: POST → worker → AssistantReplied on SSE → read model.`,
      `# ${new Date().toISOString()}, build of ${commit}: npm run bench:footprint -- --warm ${opts.warm} --turn ${opts.turn} --repeat ${opts.repeat}`,
      `# Turn ${opts.turn} of ${fp.turns} new conversations, each in its own window (${fp.windowsMs.map((ms) => fmt(ms, 0)).join(', ')} ms),`,
      `# after ${opts.warm} warm-up conversations of ${opts.turn} turns. V8 precise coverage: a file ran when one of its`,
      `# functions was called; counted when it ran in every window. *.module.ts and re-export-only files left out.`,
      `# Lines: wc -l of the .ts. "idle": also ran in a ${IDLE_MS / 1000} s idle window after the turns (timers, polls).`,
      `# api: ${t(a)}; worker: ${t(w)}; union: ${t(u)}`,
      ...(fp.reExports.size ? [`# left out, re-exports only: ${[...fp.reExports].sort().join(', ')}`] : []),
      ...(missing.length ? [`# no source (stale in dist/?): ${missing.join(', ')}`] : []),
      '',
      '# lines  process  turns  file',
      ...counted.map(row),
      '',
      `# ran in some of the turns only, not counted (${sometimes.length}):`,
      ...sometimes.map(row),
      '',
    ].join('\n'),
  );
  add({
    section: 'footprint',
    figure: `source files a ${fp.kind} turn runs (turn ${opts.turn}, warm processes; ${fp.turns === 1 ? 'one turn measured' : `ran in each of ${fp.turns} turns`})`,
    value: `API ${t(a)}; worker ${t(w)}; union ${t(u)}`,
    n: u.files,
  });
  return file;
}

export async function footprintSection(opts: FootprintOptions): Promise<void> {
  for (const fp of await turnFootprintBench(opts)) console.log(`  list: ${reportFootprint(fp, opts)}`);
}

if (require.main === module) {
  const opts: FootprintOptions = {
    warm: Number(argValue('warm') ?? 3),
    turn: Number(argValue('turn') ?? 2),
    repeat: Number(argValue('repeat') ?? 5),
  };
  if (!Object.values(opts).every((n) => Number.isInteger(n) && n >= 1))
    throw new Error('--warm, --turn and --repeat take a whole number ≥ 1');
  void runStandalone(() => footprintSection(opts));
}
