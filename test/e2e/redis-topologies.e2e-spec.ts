import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { TURN_ENDING_TYPES } from '@parley/conversation';
import { expectOk, turnOf } from '../support/api';
import { defaultReply } from '../support/fake-anthropic/default-responder';
import { FakeAnthropic, RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { newBook } from '../support/factories/books';
import { startRedisCluster, startRedisSentinel, SentinelUnderTest } from '../support/redis-topologies';
import { openStream, resumeUntil } from '../support/sse-client';
import { Client, clientFor, fakeAnthropicEnv, Stack, startStack } from '../support/stack';
import { waitFor } from '../support/wait-for';
import { connect } from '../../libs/platform/src/redis-connections';
import { announcePresence, presenceConnectionName, presentWorkers } from '../../apps/worker/src/turns/worker-presence';

const run = promisify(execFile);

/** The keys under a pattern on one Redis server. */
const keysOn = async (port: number, pattern: string, host = '127.0.0.1') =>
  (await run('redis-cli', ['-h', host, '-p', String(port), '--scan', '--pattern', pattern])).stdout
    .split('\n')
    .filter(Boolean);
/** the machine's own Redis, which REDIS_URL names in every test stack: nothing may land there */
const defaultRedis = () => new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const keysOnDefaultRedis = (pattern: string) =>
  keysOn(Number(defaultRedis().port || 6379), pattern, defaultRedis().hostname);

/** The default fake model (search, then answer citing it), its answers streamed slowly enough to be caught mid-turn. */
let answerDelayMs = 0;
const slowAnswers = (req: RecordedRequest) => {
  const reply = defaultReply(req);
  if (reply.content.some((b) => b.type === 'tool_use')) return reply;
  return {
    content: [{ type: 'text' as const, text: `${'word '.repeat(40)}${(reply.content[0] as { text: string }).text}` }],
    delayMsPerChunk: answerDelayMs,
  };
};

/** Two APIs and two workers on the topology, each client on its own API. */
async function stackOn(env: Record<string, string>, fake: FakeAnthropic): Promise<Stack> {
  return startStack({ apis: 2, workers: 2, env: { ...env, ...fakeAnthropicEnv(fake.url) } });
}

const events = async (c: Client, id: string) =>
  expectOk(await c.api.GET('/v1/conversations/{id}/events', { params: { path: { id } } })).items;

/** Every turn ended exactly once: one ending event each, and an answer for each. */
async function expectEachTurnEndedOnce(c: Client, ids: string[], turns: string[]): Promise<void> {
  const endings = (await Promise.all(ids.map((id) => events(c, id))))
    .flat()
    .filter((e) => TURN_ENDING_TYPES.includes(e.type));
  expect(endings.map(turnOf).sort()).toEqual([...turns].sort());
  expect(endings.every((e) => e.type === 'AssistantReplied')).toBe(true);
}

describe('Parley on Redis Cluster and Sentinel (e2e, 2 APIs, 2 workers)', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await FakeAnthropic.start({ defaultResponder: slowAnswers, simulatePromptCache: false });
  });
  afterAll(async () => fake?.close());

  describe('a 3-master Redis Cluster (REDIS_CLUSTER_NODES)', () => {
    let cluster: Awaited<ReturnType<typeof startRedisCluster>>;
    let stack: Stack;
    beforeAll(async () => {
      cluster = await startRedisCluster();
      stack = await stackOn(cluster.env, fake);
    }, 90_000);
    afterAll(async () => {
      await stack?.stop();
      await cluster?.stop();
    });

    it('ends every turn once, streams live text across APIs, and an SSE client resumes on the other API', async () => {
      answerDelayMs = 20; // ~0.5 s of streaming: deltas still come once the first API has subscribed to them
      const user = `cluster-${randomUUID()}`;
      const [a, b] = stack.apis.map((api) => clientFor(api.base, user));
      const bookId = (await newBook(a)).id;
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push(expectOk(await a.api.POST('/v1/conversations', { body: { bookId } }), 201).id);

      // a client of the first API watches the first conversation; the turns are posted through the second
      const watcher = openStream(`${a.base}/v1/conversations/${ids[0]}/stream`, { token: a.token });
      await watcher.until('the stream to open', () => watcher.opens > 0);
      const turns: string[] = [];
      const post = async (id: string, content: string) =>
        turns.push(
          expectOk(
            await b.api.POST('/v1/conversations/{id}/messages', { params: { path: { id } }, body: { content } }),
            202,
          ).turnId,
        );
      for (const id of ids) await post(id, 'Where does the keeper keep his logbook?');
      await watcher.until('the first answer', (f) => f.some((x) => x.event === 'AssistantReplied'), 30_000);
      watcher.close();

      for (const id of ids) await post(id, 'And what does he write in it?');
      await waitFor(
        'every turn to end',
        async () => {
          const all = (await Promise.all(ids.map((id) => events(a, id)))).flat();
          return all.filter((e) => TURN_ENDING_TYPES.includes(e.type)).length === turns.length;
        },
        60_000,
      );
      await expectEachTurnEndedOnce(a, ids, turns);

      // live text reached the first API's client though a worker wrote it and the second API took the post
      expect(watcher.frames.some((f) => f.event === 'AssistantTextDelta')).toBe(true);
      // the client comes back on the second API from where it left: every version once, in order
      const total = (await events(a, ids[0])).length;
      expect(await resumeUntil(watcher, b.base, ids[0], b.token, total)).toEqual(
        Array.from({ length: total }, (_, i) => i + 1),
      );
    }, 120_000);

    it('carries a cancel from one API to the worker running the turn (pub/sub across the nodes)', async () => {
      answerDelayMs = 100; // the answer streams for seconds
      const user = `cluster-cancel-${randomUUID()}`;
      const [a, b] = stack.apis.map((api) => clientFor(api.base, user));
      const id = expectOk(await a.api.POST('/v1/conversations', { body: {} }), 201).id;
      const abortedBefore = fake.aborted;
      const requestsBefore = fake.requests.length;
      const { turnId } = expectOk(
        await a.api.POST('/v1/conversations/{id}/messages', {
          params: { path: { id } },
          body: { content: 'Tell me everything.' },
        }),
        202,
      );
      await waitFor('the answer to be streaming', () => fake.requests.length > requestsBefore);
      expectOk(
        await b.api.POST('/v1/conversations/{id}/turns/{turnId}/cancel', { params: { path: { id, turnId } } }),
        202,
      );
      // the worker aborts its model request on the signal, long before the answer would have ended
      await waitFor('the model request to be aborted', () => fake.aborted > abortedBefore, 3_000);
      await waitFor('the turn to end', async () =>
        (await events(a, id)).some((e) => TURN_ENDING_TYPES.includes(e.type)),
      );
      expect((await events(a, id)).filter((e) => TURN_ENDING_TYPES.includes(e.type)).map((e) => e.type)).toEqual([
        'TurnCancelled',
      ]);
    }, 60_000);

    it("keeps each queue's keys in one slot (hash-tagged prefix), so BullMQ's scripts run in a cluster", async () => {
      const prefix = stack.env.QUEUE_PREFIX;
      const perNode = await Promise.all(cluster.ports.map((port) => keysOn(port, `{${prefix}}:*`)));
      const slotsOf = await Promise.all(
        perNode
          .flat()
          .map(async (key) =>
            (await run('redis-cli', ['-c', '-p', String(cluster.ports[0]), 'CLUSTER', 'KEYSLOT', key])).stdout.trim(),
          ),
      );
      expect(perNode.flat().length).toBeGreaterThan(0);
      expect(new Set(slotsOf).size).toBe(1);
      expect(await keysOnDefaultRedis(`*${prefix}*`)).toEqual([]);
    });

    it("sees a worker's presence on the cluster's primaries while it lives, and not once it is gone; no live worker's turn was handed back", async () => {
      const topology = {
        kind: 'cluster' as const,
        nodes: cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
        tls: false,
      };
      const main = connect(topology, 'parley-main');
      const workerId = `present-${randomUUID()}`;
      const presence = connect(topology, `parley-${presenceConnectionName(workerId)}`);
      try {
        await announcePresence(presence);
        expect((await presentWorkers(main))?.has(workerId)).toBe(true);
        // the stack's two workers are present too, one connection each on every primary
        expect((await presentWorkers(main))!.size).toBeGreaterThanOrEqual(3);
        presence.disconnect();
        await waitFor('the presence to go', async () => !(await presentWorkers(main))?.has(workerId), 5_000);
      } finally {
        presence.disconnect();
        main.disconnect();
      }
      // the turns of the tests above ran on both workers, each present: none was handed back
      for (const w of stack.workers) expect(w.output()).not.toContain('back to the queue');
    });
  });

  describe('Sentinel: a primary, a replica, three sentinels (REDIS_SENTINELS)', () => {
    let sentinel: SentinelUnderTest;
    let stack: Stack;
    beforeAll(async () => {
      sentinel = await startRedisSentinel();
      stack = await stackOn(sentinel.env, fake);
    }, 90_000);
    afterAll(async () => {
      await stack?.stop();
      await sentinel?.stop();
    });

    it('loses no turn when the primary dies mid-turn, and takes new turns after the failover without a restart', async () => {
      answerDelayMs = 40; // ~2 s of streaming an answer
      const user = `sentinel-${randomUUID()}`;
      const [a, b] = stack.apis.map((api) => clientFor(api.base, user));
      const bookId = (await newBook(a)).id;
      const ids: string[] = [];
      for (let i = 0; i < 4; i++)
        ids.push(expectOk(await a.api.POST('/v1/conversations', { body: { bookId } }), 201).id);
      const turns: string[] = [];
      const post = async (c: Client, id: string, content: string) =>
        turns.push(
          expectOk(
            await c.api.POST('/v1/conversations/{id}/messages', { params: { path: { id } }, body: { content } }),
            202,
          ).turnId,
        );
      for (const [i, id] of ids.entries()) await post(i % 2 ? b : a, id, 'Where does the keeper keep his logbook?');
      const watcher = openStream(`${a.base}/v1/conversations/${ids[0]}/stream`, { token: a.token });
      await watcher.until('the stream to open', () => watcher.opens > 0);
      // the primary dies while the answers are streaming
      await waitFor('answers to be streaming', async () => {
        const all = (await Promise.all(ids.map((id) => events(a, id)))).flat();
        return all.some((e) => e.type === 'ToolResultRecorded');
      });
      const before = await sentinel.primaryPort();
      const endedBefore = (await Promise.all(ids.map((id) => events(a, id))))
        .flat()
        .filter((e) => TURN_ENDING_TYPES.includes(e.type)).length;
      expect(endedBefore).toBeLessThan(ids.length); // turns are in flight as it dies
      const after = await sentinel.killPrimary();
      expect(after).not.toBe(before);
      // the stream held through the failover; its client leaves, to come back on the other API later
      watcher.close();

      // new turns work on the promoted replica, through both APIs, with no process restarted
      answerDelayMs = 0;
      for (const [i, id] of ids.entries()) await post(i % 2 ? a : b, id, 'And what does he write in it?');
      await waitFor(
        'every turn to end',
        async () => {
          const all = (await Promise.all(ids.map((id) => events(a, id)))).flat();
          return all.filter((e) => TURN_ENDING_TYPES.includes(e.type)).length >= turns.length;
        },
        90_000,
      );
      await expectEachTurnEndedOnce(a, ids, turns);
      expect([...stack.apis, ...stack.workers].every((p) => p.child.exitCode === null)).toBe(true);
      // the client comes back on the other API and misses nothing
      const total = (await events(a, ids[0])).length;
      expect(await resumeUntil(watcher, b.base, ids[0], b.token, total)).toEqual(
        Array.from({ length: total }, (_, i) => i + 1),
      );
      // the queue lives on the promoted primary, not on the Redis that REDIS_URL names
      expect((await keysOn(after, `${stack.env.QUEUE_PREFIX}:*`)).length).toBeGreaterThan(0);
      expect(await keysOnDefaultRedis(`*${stack.env.QUEUE_PREFIX}*`)).toEqual([]);
    }, 150_000);
  });
});
