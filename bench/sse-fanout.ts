/**
 * SSE fan-out: N clients follow conversations on one API process (built dist/, as production
 * runs it); each round renames the conversations and times, per client, from the PATCH until its
 * `ConversationRenamed` frame arrived. Also the API's memory and the database's transactions per
 * second while every stream is idle. The clients live in child processes, so they are not what
 * is measured.
 *
 *   node dist/bench/sse-fanout.js [clients=1000] [conversations=1] [rounds=5] [clientProcesses=2]
 *   BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=bench/results/prof" node dist/bench/sse-fanout.js 10000
 */
import { fork, ChildProcess } from 'node:child_process';
import { createServer, ServerResponse } from 'node:http';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import globalSetup from '../test/support/global-setup';
import globalTeardown from '../test/support/global-teardown';
import { clientFor, startStack } from '../test/support/stack';
import { benchNodeArgs, pct, procMemoryMb, sleep } from './util';

export interface SseFanoutOptions {
  clients: number;
  conversations: number;
  rounds: number;
  /** child processes the clients are spread over (default 2), so reading them is not what is timed */
  clientProcesses?: number;
  /** when not already run by the caller (npm run bench does) */
  setup?: boolean;
}

export interface SseFanoutResult {
  clients: number;
  conversations: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  apiRssMb: number;
  apiPeakRssMb: number;
  idleTransactionsPerSecond: number;
  baselineTransactionsPerSecond: number;
}

const nowMs = () => performance.timeOrigin + performance.now();
const RENAMED = Buffer.from('event: ConversationRenamed');

// ---- the client process ----------------------------------------------------------------------

type ToClients =
  | { kind: 'open'; port: number; token: string; conversations: string[]; count: number }
  | { kind: 'collect'; round: number };
type FromClients = { kind: 'ready'; open: number } | { kind: 'arrivals'; arrivals: Array<[number, number]> };

/** Raw sockets (an HTTP client library per connection would cost more than the server). */
function runClients(): void {
  const conns: Array<{ conv: number; renamedAt: number[]; ready: boolean }> = [];
  const send = (m: FromClients) => process.send!(m);
  process.on('message', async (m: ToClients) => {
    if (m.kind === 'open') {
      for (let i = 0; i < m.count; i++) {
        const conv = i % m.conversations.length;
        const c = { conv, renamedAt: [] as number[], ready: false };
        conns.push(c);
        const socket = net.connect(m.port, '127.0.0.1');
        socket.write(
          `GET /v1/conversations/${m.conversations[conv]}/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${m.token}\r\n\r\n`,
        );
        // cheap on purpose (the client must not be the bottleneck): small frames come in one
        // chunk, so markers are looked for in each chunk as it arrives, without parsing frames
        socket.on('data', (chunk: Buffer) => {
          if (!c.ready && chunk.includes('id: 1\n')) c.ready = true;
          for (let at = chunk.indexOf(RENAMED); at >= 0; at = chunk.indexOf(RENAMED, at + 1)) c.renamedAt.push(nowMs());
        });
        socket.on('error', () => undefined);
        if (i % 200 === 199) {
          // ramp up: let the server take these before the next ones
          const target = i + 1;
          while (conns.filter((x) => x.ready).length < target) await sleep(20);
        }
      }
      while (conns.some((x) => !x.ready)) await sleep(20);
      send({ kind: 'ready', open: conns.length });
    } else {
      const deadline = Date.now() + 60_000;
      while (conns.some((c) => c.renamedAt.length < m.round) && Date.now() < deadline) await sleep(10);
      send({
        kind: 'arrivals',
        arrivals: conns.map((c) => [c.conv, c.renamedAt[m.round - 1] ?? Number.POSITIVE_INFINITY]),
      });
    }
  });
}

// ---- the anchor: the least a Node process does to fan a frame out ------------------------------

type ToBare = { kind: 'send'; round: number };
type FromBare = { kind: 'listening'; port: number };

/**
 * node:http alone, in a process of its own as the API is: every GET is an SSE stream (the same
 * headers, chunked as the API's are) that gets the first event at once; on `send`, one
 * ConversationRenamed frame the size of the API's is written to every stream. What a frame costs
 * per subscriber in the kernel (a write to each socket) and in Node's HTTP layer, without Parley.
 */
function runBareServer(): void {
  const streams = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.write('retry: 20\n\n');
    res.write(`id: 1\nevent: ConversationStarted\ndata: {}\n\n`);
    streams.add(res);
    res.on('close', () => streams.delete(res));
  });
  server.listen(0, '127.0.0.1', () =>
    process.send!({ kind: 'listening', port: (server.address() as net.AddressInfo).port } satisfies FromBare),
  );
  process.on('message', (m: ToBare) => {
    const data = JSON.stringify({
      type: 'ConversationRenamed',
      version: m.round + 1,
      data: { title: `round ${m.round}` },
    });
    const frame = Buffer.from(`id: ${m.round + 1}\nevent: ConversationRenamed\ndata: ${data.padEnd(420)}\n\n`);
    for (const res of streams) res.write(frame);
  });
}

/** The anchor's fan-out: `clients` streams on the bare server, `rounds` frames, each timed from the order to write it. */
export async function bareFanoutBench(opts: { clients: number; rounds: number; clientProcesses?: number }) {
  const server = fork(__filename, ['--bare-server'], { stdio: 'inherit' });
  const children = clientProcesses(opts.clientProcesses);
  try {
    const port = await new Promise<number>((resolve) => server.once('message', (m: FromBare) => resolve(m.port)));
    await openStreams(children, port, '', ['bare'], opts.clients);
    await sleep(1_000);
    const latencies: number[] = [];
    for (let round = 1; round <= opts.rounds; round++) {
      const started = nowMs();
      server.send({ kind: 'send', round } satisfies ToBare);
      for (const [, at] of await arrivalsOf(children, round)) latencies.push(at - started);
      await sleep(500);
    }
    return { p50Ms: pct(latencies, 0.5), p99Ms: pct(latencies, 0.99), maxMs: Math.max(...latencies) };
  } finally {
    for (const child of children) child.kill();
    server.kill();
  }
}

function ask<T extends FromClients['kind']>(child: ChildProcess, m: ToClients, reply: T) {
  return new Promise<Extract<FromClients, { kind: T }>>((resolve) => {
    const on = (r: FromClients) => {
      if (r.kind !== reply) return;
      child.off('message', on);
      resolve(r as Extract<FromClients, { kind: T }>);
    };
    child.on('message', on);
    child.send(m);
  });
}

/** `count` processes running runClients, so that reading the streams is not what is timed. */
function clientProcesses(count = 2): ChildProcess[] {
  return Array.from({ length: count }, () => fork(__filename, ['--clients'], { stdio: 'inherit' }));
}

/** Opens `clients` streams on `port`, shared out over the processes, each following every conversation; one process after another. */
async function openStreams(
  children: ChildProcess[],
  port: number,
  token: string,
  conversations: string[],
  clients: number,
) {
  const count = Math.ceil(clients / children.length);
  for (const child of children) await ask(child, { kind: 'open', port, token, conversations, count }, 'ready');
}

/** When each stream saw the frame of `round`: [conversation index, time] from every process. */
async function arrivalsOf(children: ChildProcess[], round: number): Promise<Array<[number, number]>> {
  const arrivals: Array<[number, number]> = [];
  for (const child of children) arrivals.push(...(await ask(child, { kind: 'collect', round }, 'arrivals')).arrivals);
  return arrivals;
}

// ---- the bench ----------------------------------------------------------------------------------

export async function sseFanoutBench(opts: SseFanoutOptions): Promise<SseFanoutResult> {
  if (opts.setup) await globalSetup();
  const stack = await startStack({
    apis: 1,
    workers: 1,
    env: { AGENT_ENABLED: 'false', LOG_LEVEL: 'error' },
    nodeArgs: benchNodeArgs(),
  });
  const pool = new Pool({ connectionString: stack.db.url, max: 2 });
  const statements = async () =>
    Number(
      (
        await pool.query<{ n: string }>(
          'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()',
        )
      ).rows[0].n,
    );
  const perSecond = async (ms: number) => {
    await pool.query('SELECT pg_stat_clear_snapshot()');
    const a = await statements();
    await sleep(ms);
    await pool.query('SELECT pg_stat_clear_snapshot()');
    return ((await statements()) - a) / (ms / 1000);
  };
  const children = clientProcesses(opts.clientProcesses);
  try {
    const alice = clientFor(stack.base, `bench-sse-${randomUUID()}`);
    const ids: string[] = [];
    for (let i = 0; i < opts.conversations; i += 20) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(20, opts.conversations - i) }, () => alice.req('POST', '/v1/conversations', {})),
      );
      ids.push(...batch.map((r) => r.body.id as string));
    }
    const baseline = await perSecond(5_000);
    const apiPid = stack.apis[0].child.pid!;
    await openStreams(children, Number(new URL(stack.base).port), alice.token, ids, opts.clients);
    await sleep(1_000);
    const idle = await perSecond(5_000);
    const latencies: number[] = [];
    for (let round = 1; round <= opts.rounds; round++) {
      const started = new Map<number, number>();
      for (let i = 0; i < ids.length; i += 20) {
        await Promise.all(
          ids.slice(i, i + 20).map(async (id, j) => {
            started.set(i + j, nowMs());
            const r = await alice.req('PATCH', `/v1/conversations/${id}`, { title: `round ${round}` });
            if (r.status !== 200) throw new Error(`rename answered ${r.status}: ${r.text}`);
          }),
        );
      }
      for (const [conv, at] of await arrivalsOf(children, round)) latencies.push(at - started.get(conv)!);
      await sleep(500);
    }
    return {
      clients: Math.ceil(opts.clients / children.length) * children.length,
      conversations: opts.conversations,
      p50Ms: pct(latencies, 0.5),
      p99Ms: pct(latencies, 0.99),
      maxMs: Math.max(...latencies),
      apiRssMb: procMemoryMb(apiPid, 'VmRSS'),
      apiPeakRssMb: procMemoryMb(apiPid, 'VmHWM'),
      idleTransactionsPerSecond: idle,
      baselineTransactionsPerSecond: baseline,
    };
  } finally {
    for (const child of children) child.kill();
    await pool.end();
    await stack.stop();
    if (opts.setup) await globalTeardown();
  }
}

if (require.main === module) {
  if (process.argv.includes('--clients')) runClients();
  else if (process.argv.includes('--bare-server')) runBareServer();
  else if (process.argv.includes('--bare')) {
    const [clients = 1000, rounds = 5] = process.argv.filter((a) => /^\d+$/.test(a)).map(Number);
    bareFanoutBench({ clients, rounds }).then(
      (r) => {
        console.log(
          `bare node:http fan-out, ${clients} clients: p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms, max ${r.maxMs.toFixed(1)} ms`,
        );
        process.exit(0);
      },
      (e) => {
        console.error(e);
        process.exit(1);
      },
    );
  } else {
    const [clients = 1000, conversations = 1, rounds = 5, clientProcesses = 2] = process.argv.slice(2).map(Number);
    sseFanoutBench({ clients, conversations, rounds, clientProcesses, setup: true }).then(
      (r) => {
        const f = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'missed');
        console.log(
          `SSE fan-out, ${r.clients} clients on ${r.conversations} conversation(s): ` +
            `p50 ${f(r.p50Ms)} ms, p99 ${f(r.p99Ms)} ms, max ${f(r.maxMs)} ms; ` +
            `API RSS ${f(r.apiRssMb)} MB (peak ${f(r.apiPeakRssMb)} MB); ` +
            `idle ${f(r.idleTransactionsPerSecond)} transactions/s (${f(r.baselineTransactionsPerSecond)} with no stream open)`,
        );
        process.exit(0);
      },
      (e) => {
        console.error(e);
        process.exit(1);
      },
    );
  }
}
