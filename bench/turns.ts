/**
 * The running service (1 API + workers as processes, from dist/):
 *  4. turn overhead: POST → AssistantReplied on SSE, one at a time, scripted model, no book,
 *     against the floor's p50/p99;
 *  5. end-to-end turns/s: 16 conversations in a closed loop;
 *  -  Redis commands and Postgres transactions per one-call turn;
 *  6. POST accepted/s with the agent off (AGENT_ENABLED=false), 16 in flight, against raw INSERT, and
 *     the same with the worker answering every post;
 *  8. worker scaling: a model answering after 500 ms, 1, 2 and 4 workers of 16 slots, 1 and 8 of 4;
 *  9. crash recovery: kill -9 of the worker with 12 turns in flight, a second one idle, 3 s model calls.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { Client as PgClient } from 'pg';
import { FakeAnthropic, type FakeReply } from '../test/support/fake-anthropic/fake-anthropic.server';
import { fakeAnthropicEnv, type Client, type Stack } from '../test/support/stack';
import { presentWorkers } from '../apps/worker/src/turns/worker-presence';
import { redisUrl } from '../test/support/test-database';
import { waitFor } from '../test/support/wait-for';
import { add, anchors } from './report';
import { benchClient, liveConversation, newConversation, withStack } from './service';
import { cpuMs, delayingProxy, fmt, pct, secs, sleep } from './util';

/** Closed loop: each conversation posts its next message once the previous turn ended. */
async function closedLoop(
  convs: Array<Awaited<ReturnType<typeof liveConversation>>>,
  seconds: number,
): Promise<{ perSec: number; lat: number[] }> {
  const lat: number[] = [];
  let answered = 0;
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  await Promise.all(
    convs.map(async (c, k) => {
      for (let i = 0; performance.now() < until; i++) {
        const r = await c.turn(`conversation ${c.id} question ${k}.${i}`);
        if (r.type === 'AssistantReplied') answered++;
        lat.push(r.ms);
      }
    }),
  );
  return { perSec: answered / ((performance.now() - t0) / 1000), lat };
}

async function xactCommits(stack: Stack): Promise<number> {
  const c = new PgClient({ connectionString: stack.db.url });
  await c.connect();
  try {
    await c.query('SELECT pg_stat_force_next_flush()').catch(() => undefined);
    const r = await c.query('SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = current_database()');
    return Number(r.rows[0].n);
  } finally {
    await c.end();
  }
}

export async function scriptedTurnsBench(): Promise<void> {
  await withStack({ apis: 1, workers: 1, env: { LLM_PROVIDER: 'scripted' } }, async (stack) => {
    const alice = benchClient(stack);
    // 4. turn overhead, one at a time
    const one = await liveConversation(alice);
    const lat: number[] = [];
    const n = secs(200, 40);
    const [apiPid, workerPid] = [stack.apis[0].child.pid!, stack.workers[0].child.pid!];
    let cpu0 = { api: 0, worker: 0 };
    for (let i = 0; i < n + 10; i++) {
      if (i === 10) cpu0 = { api: cpuMs(apiPid), worker: cpuMs(workerPid) };
      const r = await one.turn(`question ${i}`);
      if (i >= 10) lat.push(r.ms);
    }
    // steadier than the latency on a shared machine: what the service's own processes spend a turn
    const cpuPerTurn = { api: (cpuMs(apiPid) - cpu0.api) / n, worker: (cpuMs(workerPid) - cpu0.worker) / n };
    const p50 = pct(lat, 0.5);
    const p99 = pct(lat, 0.99);
    const f50 = anchors.floor_p50;
    const f99 = anchors.floor_p99;
    add({
      section: 'turns',
      figure: `turn overhead p50: POST → AssistantReplied on SSE (${n} sequential, scripted, no book)`,
      value: `${fmt(p50, 1)} ms`,
      n: p50,
      anchor: f50 ? `floor p50 ${fmt(f50, 2)} ms` : undefined,
      ratio: f50 ? p50 / f50 : undefined,
      goal: '≤ 3× floor',
      ok: f50 ? p50 / f50 <= 3 : undefined,
    });
    const r50 = anchors.round_trip_p50;
    add({
      section: 'turns',
      figure: 'turn overhead p50 against a bare HTTP + INSERT + SSE round trip',
      value: `${fmt(p50, 1)} ms`,
      n: p50,
      anchor: r50 ? `round trip p50 ${fmt(r50, 2)} ms` : undefined,
      ratio: r50 ? p50 / r50 : undefined,
      goal: '≤ 3× the round trip',
      ok: r50 ? p50 / r50 <= 3 : undefined,
    });
    add({
      section: 'turns',
      figure: 'turn overhead p99',
      value: `${fmt(p99, 1)} ms`,
      n: p99,
      anchor: f99 ? `floor p99 ${fmt(f99, 2)} ms` : undefined,
      ratio: f99 ? p99 / f99 : undefined,
      goal: '≤ 4× floor',
      ok: f99 ? p99 / f99 <= 4 : undefined,
    });

    add({
      section: 'turns',
      figure: `CPU per sequential turn (the same ${n} turns, utime + stime)`,
      value: `API ${fmt(cpuPerTurn.api, 2)} ms, worker ${fmt(cpuPerTurn.worker, 2)} ms`,
      n: cpuPerTurn.api + cpuPerTurn.worker,
    });

    // Redis commands and Postgres transactions per one-call turn (over ~50 sequential turns)
    const prefix = stack.env.QUEUE_PREFIX;
    const monitor = new Redis(redisUrl());
    const mon = await monitor.monitor();
    let ours = 0;
    let oursLua = 0;
    mon.on('monitor', (_time: string, args: string[], source: string) => {
      if (!args.some((a) => typeof a === 'string' && a.includes(prefix))) return;
      if (source.includes('lua')) oursLua++;
      else ours++;
    });
    const turns = secs(50, 20);
    await sleep(1_100);
    const x0 = await xactCommits(stack);
    for (let i = 0; i < turns; i++) await one.turn(`count ${i}`);
    await sleep(1_100);
    const x1 = await xactCommits(stack);
    mon.disconnect();
    monitor.disconnect();
    add({
      section: 'turns',
      figure: `Redis commands per one-call turn (MONITOR, keys under the stack's prefix, ${turns} turns)`,
      value: `${fmt(ours / turns, 1)} commands + ${fmt(oursLua / turns, 1)} inside Lua scripts`,
      n: ours / turns,
    });
    add({
      section: 'turns',
      figure: `Postgres transactions per one-call turn (pg_stat_database xact_commit, ${turns} turns)`,
      value: `${fmt((x1 - x0 - 2) / turns, 1)} commits`,
      n: (x1 - x0 - 2) / turns,
    });
    one.close();

    // 5. end-to-end turns/s, 16 conversations in a closed loop
    const convs = await Promise.all(Array.from({ length: 16 }, () => liveConversation(alice)));
    const T = secs(20, 5);
    const r = await closedLoop(convs, T);
    convs.forEach((c) => c.close());
    add({
      section: 'turns',
      figure: `end-to-end turns/s, 16 conversations closed loop, 1 API + 1 worker, ${T} s`,
      value: `${fmt(r.perSec, 1)} turns/s (p50 ${fmt(pct(r.lat, 0.5), 0)} ms, p99 ${fmt(pct(r.lat, 0.99), 0)} ms)`,
      n: r.perSec,
      goal: '≥ 500 turns/s',
      ok: r.perSec >= 500,
    });
  });
}

/** 6b. POST accepted/s with the worker answering every post (scripted model), on a stack of its own. */
export async function postsWithTurnsBench(): Promise<void> {
  await withStack({ apis: 1, workers: 1, env: { LLM_PROVIDER: 'scripted' } }, async (stack) => {
    const alice = benchClient(stack);
    const ids = await Promise.all(Array.from({ length: 128 }, () => newConversation(alice)));
    const P = secs(10, 3);
    await untilTurnsAnswered(stack);
    const posts = await postsAccepted(alice, ids, P, stack.apis[0].child.pid!);
    addPostsRow(`POST accepted/s, one API, worker on, 16 in flight over 128 conversations, ${P} s`, posts, 0.05);
    // each client posting to a conversation of its own: every post queues a turn behind the one before
    const own = await Promise.all(Array.from({ length: 16 }, () => newConversation(alice)));
    await untilTurnsAnswered(stack); // the row before left thousands of turns to answer: not this row's load
    const queued = await postsAccepted(alice, own, P, stack.apis[0].child.pid!);
    addPostsRow(`POST accepted/s, one API, worker on, 16 in flight over 16 conversations, ${P} s`, queued, 0.05);
  });
}

/** Waits until the stack's worker has no turn left to run: each posts row starts on an idle stack. */
async function untilTurnsAnswered(stack: Stack): Promise<void> {
  const queue = new Queue(AGENT_TURNS_QUEUE, {
    connection: { url: redisUrl(), maxRetriesPerRequest: null },
    prefix: stack.env.QUEUE_PREFIX,
  });
  try {
    await waitFor(
      'every turn queued so far answered',
      async () => {
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        return Object.values(counts).every((n) => n === 0);
      },
      600_000,
      250,
    );
  } finally {
    await queue.close();
  }
}

/**
 * 16 POSTs in flight over `ids`, each sent when the one before it answered, for `seconds`; with
 * the API process's CPU per accepted POST (utime + stime), the figure a loaded machine skews least.
 */
async function postsAccepted(
  c: Client,
  ids: string[],
  seconds: number,
  apiPid: number,
): Promise<{ perSec: number; p50: number; other: number; statuses: string; cpuMsPerPost: number }> {
  const cpu0 = cpuMs(apiPid);
  let accepted = 0;
  let other = 0;
  const refused = new Map<string, number>();
  const lat: number[] = [];
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: 16 }, async (_, k) => {
      for (let i = 0; performance.now() < until; i++) {
        const s = performance.now();
        const r = await c.req('POST', `/v1/conversations/${ids[(k + i * 16) % ids.length]}/messages`, {
          content: `q ${k}.${i}`,
        });
        lat.push(performance.now() - s);
        if (r.status === 202) accepted++;
        else {
          other++;
          const what = `${r.status} ${r.body?.code ?? ''}`.trim();
          refused.set(what, (refused.get(what) ?? 0) + 1);
        }
      }
    }),
  );
  const cpuMsPerPost = (cpuMs(apiPid) - cpu0) / Math.max(1, accepted);
  const statuses = [...refused].map(([what, n]) => `${what} ×${n}`).join(', ');
  return { perSec: accepted / ((performance.now() - t0) / 1000), p50: pct(lat, 0.5), other, statuses, cpuMsPerPost };
}

/** The POST figure's row, against pgbench INSERT -c 16 when the anchors ran. */
function addPostsRow(figure: string, r: Awaited<ReturnType<typeof postsAccepted>>, goalOfRaw: number): void {
  const raw = anchors.insert_c16;
  add({
    section: 'turns',
    figure,
    value: `${fmt(r.perSec, 0)} /s (p50 ${fmt(r.p50, 1)} ms, API CPU ${fmt(r.cpuMsPerPost, 2)} ms a POST${r.other ? `, ${r.other} not 202: ${r.statuses}` : ''})`,
    n: r.perSec,
    anchor: raw ? `${fmt(raw, 0)} tps pgbench INSERT -c 16` : undefined,
    ratio: raw ? r.perSec / raw : undefined,
    goal: `≥ ${goalOfRaw} of raw`,
    ok: raw ? r.perSec / raw >= goalOfRaw : undefined,
  });
}

export async function agentOffBench(): Promise<void> {
  await withStack({ apis: 1, workers: 1, env: { LLM_PROVIDER: 'scripted', AGENT_ENABLED: 'false' } }, async (stack) => {
    const alice = benchClient(stack);
    const ids = await Promise.all(Array.from({ length: 128 }, () => newConversation(alice)));
    const T = secs(10, 3);
    const r = await postsAccepted(alice, ids, T, stack.apis[0].child.pid!);
    addPostsRow(`POST accepted/s, agent off, 16 in flight over 128 conversations, ${T} s`, r, 0.3);
  });
}

const textReply = (): FakeReply => ({ content: [{ type: 'text', text: 'A short answer from the slow model.' }] });

/** Turns/s of `workers` processes of `concurrency` slots each, on a 500 ms model, in a closed loop; a row beside the ideal. */
async function scalingRun(
  proxy: { url: string; records: unknown[] },
  fake: FakeAnthropic,
  workers: number,
  concurrency: number,
): Promise<number> {
  return withStack(
    {
      apis: 1,
      workers,
      env: { ...fakeAnthropicEnv(proxy.url), WORKER_CONCURRENCY: String(concurrency) },
    },
    async (stack) => {
      const alice = benchClient(stack);
      const convs = await Promise.all(Array.from({ length: workers * concurrency + 8 }, () => liveConversation(alice)));
      await closedLoop(convs.slice(0, 4), 2); // warm up
      fake.reset();
      const calls0 = proxy.records.length;
      const T = secs(20, 6);
      const r = await closedLoop(convs, T);
      const callsPerTurn = (proxy.records.length - calls0) / r.lat.length;
      convs.forEach((c) => c.close());
      const ideal = (workers * concurrency) / 0.5;
      add({
        section: 'scaling',
        figure: `${workers} worker${workers > 1 ? 's' : ''} × ${concurrency} slots, model answers after 500 ms, ${convs.length} conversations, ${T} s`,
        value: `${fmt(r.perSec, 1)} turns/s (p50 ${fmt(pct(r.lat, 0.5), 0)} ms, ${fmt(callsPerTurn, 2)} model calls a turn)`,
        n: r.perSec,
        anchor: `ideal ${fmt(ideal, 0)} turns/s (${workers}×${concurrency} slots / 0.5 s)`,
        ratio: r.perSec / ideal,
        goal: '≥ 0.9 of ideal',
        ok: r.perSec / ideal >= 0.9,
      });
      return r.perSec;
    },
  );
}

/**
 * 8. Worker scaling: N workers against one, on a model that answers after 500 ms. With 16 slots a
 * worker (the default), 1, 2 and 4 workers; with 4 slots, 1 and 8 workers, so that 8 workers'
 * turns (64/s) stay within what two cores can run (16 slots × 8 would ask 256 turns/s of them).
 */
export async function workerScalingBench(): Promise<void> {
  const fake = await FakeAnthropic.start({ defaultResponder: textReply });
  const proxy = await delayingProxy(fake.url, 500);
  try {
    for (const [concurrency, counts] of [
      [16, [1, 2, 4]],
      [4, [1, 8]],
    ] as const) {
      const perSec: Record<number, number> = {};
      for (const workers of counts) perSec[workers] = await scalingRun(proxy, fake, workers, concurrency);
      for (const workers of counts.slice(1)) {
        const ratio = perSec[workers] / perSec[1];
        add({
          section: 'scaling',
          figure: `${workers} workers / 1 worker, ${concurrency} slots each`,
          value: `${fmt(perSec[workers], 1)} vs ${fmt(perSec[1], 1)} turns/s`,
          n: ratio,
          anchor: `${workers}× (1 worker ${fmt(perSec[1], 1)} turns/s)`,
          ratio: ratio / workers,
          goal: '≥ 0.9 of N×',
          ok: ratio / workers >= 0.9,
        });
      }
    }
  } finally {
    await proxy.close();
    await fake.close();
  }
}

const conversationOf = (body: string) => /conversation ([0-9a-f-]{36})/.exec(body)?.[1];

/** The agent workers with a presence connection to Redis (apps/worker/src/turns/worker-presence.ts), on any stack. */
async function presentWorkerCount(): Promise<number> {
  const redis = new Redis(redisUrl());
  try {
    return (await presentWorkers(redis))?.size ?? 0;
  } finally {
    redis.disconnect();
  }
}

/**
 * 9. Recovery: one worker with 12 turns in flight (their first calls held until the kill), a second
 * worker idle beside it; `kill -9` of the first. Per cut turn: the kill → its next model request
 * (the takeover), and the kill → its AssistantReplied (the recovery: the takeover and a 3 s call);
 * the model answers bought (calls that completed) per turn: 1 each, none bought twice.
 */
export async function crashBench(): Promise<void> {
  const TURNS = 12;
  const CALL_MS = 3_000;
  const fake = await FakeAnthropic.start({ defaultResponder: textReply });
  // the calls the kill cuts are held past it; every call after them takes CALL_MS
  const proxy = await delayingProxy(fake.url, (n) => (n < TURNS ? 120_000 : CALL_MS));
  try {
    await withStack({ apis: 1, workers: 1, env: { ...fakeAnthropicEnv(proxy.url) } }, async (stack) => {
      const alice = benchClient(stack);
      const ids = await Promise.all(Array.from({ length: TURNS }, () => newConversation(alice)));
      for (const id of ids)
        await alice.req('POST', `/v1/conversations/${id}/messages`, { content: `conversation ${id} turn 0` });
      await waitFor("every turn's model call in flight on the one worker", () => proxy.records.length >= TURNS, 30_000);
      const present = await presentWorkerCount();
      await stack.startWorker();
      await waitFor('the second worker present', async () => (await presentWorkerCount()) > present, 60_000, 100);
      await sleep(500);
      const victim = stack.workers[0];
      const killedAt = Date.now();
      victim.child.kill('SIGKILL');
      const endedAt = new Map<string, number>();
      await waitFor(
        'every cut turn answered',
        async () => {
          for (const id of ids.filter((c) => !endedAt.has(c))) {
            const r = await alice.req('GET', `/v1/conversations/${id}/events`);
            if ((r.body?.items ?? []).some((e: { type: string }) => e.type === 'AssistantReplied'))
              endedAt.set(id, Date.now());
          }
          return endedAt.size === ids.length;
        },
        120_000,
        50,
      );
      const cut = proxy.records.filter((r) => r.at <= killedAt && r.aborted).map((r) => conversationOf(r.body));
      const takeover = ids.map(
        (c) => proxy.records.find((r) => r.at > killedAt && conversationOf(r.body) === c)!.at - killedAt,
      );
      const recovery = ids.map((c) => endedAt.get(c)! - killedAt);
      const bought = ids.map((c) => proxy.records.filter((r) => r.done && conversationOf(r.body) === c).length);
      const twice = bought.filter((n) => n > 1).length;
      add({
        section: 'recovery',
        figure: `kill -9 of the worker with ${TURNS} turns in flight (${cut.length} calls cut) → each cut turn's next model request: the takeover`,
        value: `max ${fmt(Math.max(...takeover) / 1000, 2)} s, median ${fmt(pct(takeover, 0.5) / 1000, 2)} s`,
        n: Math.max(...takeover),
        goal: '≤ 1.5 s',
        ok: Math.max(...takeover) <= 1_500,
      });
      add({
        section: 'recovery',
        figure: `the same → every turn's AssistantReplied (a ${CALL_MS / 1000} s model call made again)`,
        value: `max ${fmt(Math.max(...recovery) / 1000, 2)} s, median ${fmt(pct(recovery, 0.5) / 1000, 2)} s`,
        n: Math.max(...recovery),
        anchor: `${CALL_MS / 1000} s (the calls themselves)`,
        ratio: Math.max(...recovery) / CALL_MS,
        goal: '≤ 4.5 s',
        ok: Math.max(...recovery) <= 4_500,
      });
      add({
        section: 'recovery',
        figure: 'model answers bought per turn (calls that completed), the kill included',
        value: `${bought.reduce((a, b) => a + b, 0)} for ${TURNS} turns, ${twice} bought twice`,
        n: twice,
        goal: 'none twice',
        ok: twice === 0,
      });
    });
  } finally {
    await proxy.close();
    await fake.close();
  }
}
