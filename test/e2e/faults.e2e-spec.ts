/**
 * A model answer is paid for once. The real processes (API, workers), the real SDK against the
 * fake Messages API, and real faults: a follow-up message during a model call, a deploy's
 * SIGTERM, Postgres stopped and started. Each test counts the requests the fake API received
 * and the events each turn ended with.
 */
import { randomUUID } from 'node:crypto';
import { TURN_ENDING_TYPES } from '@parley/conversation';
import { ApiResult, Envelope, expectOk, expectProblem, turnOf } from '../support/api';
import { FakeAnthropic, FakeReply, RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { PrivatePostgres, startPrivatePostgres } from '../support/private-postgres';
import { openStream } from '../support/sse-client';
import { Client, clientFor, fakeAnthropicEnv, Proc, startStack, Stack } from '../support/stack';
import { waitFor } from '../support/wait-for';
import { takeovers } from '../support/worker-logs';

/** A plain answer (no book, no tools) streamed over ~LLM_MS. */
const LLM_MS = 3_000;
const CHUNKS = 20;
function slowAnswer(req: RecordedRequest): FakeReply {
  const question = JSON.stringify(req.body.messages.at(-1)).slice(0, 60);
  const words = Array.from({ length: CHUNKS * 3 }, (_, i) => `w${i}`).join(' ');
  return { content: [{ type: 'text', text: `About ${question}: ${words}` }], delayMsPerChunk: LLM_MS / CHUNKS };
}

const questionOf = (r: RecordedRequest): string => JSON.stringify(r.body.messages);

async function endings(alice: Client, conversationId: string): Promise<Envelope[]> {
  const r = await alice.api.GET('/v1/conversations/{id}/events', { params: { path: { id: conversationId } } });
  if (r.response.status !== 200 || !r.data) return [];
  return r.data.items.filter((e) => TURN_ENDING_TYPES.includes(e.type));
}

const newConversation = async (alice: Client) =>
  expectOk(await alice.api.POST('/v1/conversations', { body: {} }), 201).id;
const postMessage = (alice: Client, id: string, content: string) =>
  alice.api.POST('/v1/conversations/{id}/messages', { params: { path: { id } }, body: { content } });

async function postTurns(alice: Client, n: number): Promise<Array<{ conversationId: string; turnId: string }>> {
  const turns = [];
  for (let i = 0; i < n; i++) {
    const conversationId = await newConversation(alice);
    const { turnId } = expectOk(await postMessage(alice, conversationId, `question ${i}`), 202);
    turns.push({ conversationId, turnId });
  }
  return turns;
}

/** Every turn ends exactly once, with AssistantReplied. */
async function expectEachAnsweredOnce(
  alice: Client,
  turns: Array<{ conversationId: string; turnId: string }>,
  stack: Stack,
) {
  await waitFor(
    'every turn to end',
    async () => {
      for (const t of turns) if ((await endings(alice, t.conversationId)).length === 0) return false;
      return true;
    },
    60_000,
    200,
  ).catch((e: Error) => {
    // what the processes said is the first thing to read when this fails
    const logs = [...stack.apis, ...stack.workers].map((p) => `--- ${p.name}\n${p.output().slice(-6_000)}`);
    throw new Error(`${e.message}\n${logs.join('\n')}`);
  });
  for (const t of turns) {
    const ends = await endings(alice, t.conversationId);
    expect(ends.map((e) => [e.type, turnOf(e)])).toEqual([['AssistantReplied', t.turnId]]);
  }
}

const exited = (p: Proc) =>
  new Promise<void>((r) => (p.child.exitCode !== null || p.child.signalCode !== null ? r() : p.child.once('exit', r)));

describe('faults (e2e): a model answer is bought once', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await FakeAnthropic.start({ defaultResponder: slowAnswer });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  describe('appends that move the conversation on during a model call', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({ env: fakeAnthropicEnv(fake.url) });
    }, 60_000);
    afterAll(() => stack?.stop());

    it('keeps the answer when a follow-up message and a rename land mid-call: one call per turn', async () => {
      const alice = clientFor(stack.base, `follow-${randomUUID()}`);
      const id = await newConversation(alice);
      const first = expectOk(await postMessage(alice, id, 'first question'), 202);
      await fake.waitFor('the first call', () => fake.requests.length === 1, 20_000);
      await new Promise((r) => setTimeout(r, 800));
      const second = expectOk(await postMessage(alice, id, 'follow-up'), 202);
      expectOk(
        await alice.api.PATCH('/v1/conversations/{id}', {
          params: { path: { id } },
          body: { title: 'renamed mid-call' },
        }),
        200,
      );

      await waitFor('both turns to end', async () => (await endings(alice, id)).length === 2, 30_000, 100);
      const ends = await endings(alice, id);
      expect(ends.map((e) => [e.type, turnOf(e)])).toEqual([
        ['AssistantReplied', first.turnId],
        ['AssistantReplied', second.turnId],
      ]);
      expect(fake.requests.filter((r) => questionOf(r).includes('first question'))).toHaveLength(2); // turn 1, and turn 2's history
      expect(fake.requests).toHaveLength(2);
    }, 60_000);
  });

  describe('the log delivered twice', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({ env: { ...fakeAnthropicEnv(fake.url), EVENT_POLL_MS: '100' } });
    }, 60_000);
    afterAll(() => stack?.stop());

    it('changes nothing when the dispatcher and the projections read the whole log again', async () => {
      const alice = clientFor(stack.base, `redelivery-${randomUUID()}`);
      const turns = await postTurns(alice, 3);
      await expectEachAnsweredOnce(alice, turns, stack);
      const readModels = async () => ({
        conversations: expectOk(await alice.api.GET('/v1/conversations')),
        messages: await Promise.all(
          turns.map(async (t) =>
            expectOk(
              await alice.api.GET('/v1/conversations/{id}/messages', { params: { path: { id: t.conversationId } } }),
            ),
          ),
        ),
      });
      await waitFor('the read models to show every reply', async () => {
        const m = await readModels();
        return m.messages.every((page) => page.items.some((x) => x.role === 'assistant'));
      });
      const before = await readModels();
      const calls = fake.requests.length;
      const eventCount = async () => Number((await stack.db.pool.query('SELECT count(*) AS n FROM events')).rows[0].n);
      const events = await eventCount();

      // both consumers start over from the beginning of the log, as a lost checkpoint would make them
      await stack.db.pool.query(`UPDATE consumer_checkpoints SET transaction_id = '0', position = 0`);
      const rewound = async () =>
        (await stack.db.pool.query(`SELECT consumer FROM consumer_checkpoints WHERE position = 0`)).rowCount === 0;
      await waitFor('both consumers to read the log again', rewound, 20_000);
      await new Promise((r) => setTimeout(r, 1_000)); // time for any job they enqueued to run

      expect(fake.requests).toHaveLength(calls);
      expect(await eventCount()).toBe(events);
      expect(await readModels()).toEqual(before);
    }, 90_000);
  });

  describe('a deploy: SIGTERM to one of two workers', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({ workers: 2, env: { ...fakeAnthropicEnv(fake.url), WORKER_CONCURRENCY: '8' } });
    }, 60_000);
    afterAll(() => stack?.stop());

    it('finishes the turns it holds, takes no new one, exits by itself; 12 calls for 12 turns', async () => {
      const alice = clientFor(stack.base, `deploy-${randomUUID()}`);
      const turns = await postTurns(alice, 12);
      await fake.waitFor('12 calls in flight', () => fake.requests.length === 12, 30_000);
      const victim = stack.workers[0];
      const signalledAt = Date.now();
      victim.child.kill('SIGTERM');
      await exited(victim);
      const exitedAfter = Date.now() - signalledAt;
      await expectEachAnsweredOnce(alice, turns, stack);
      expect(fake.requests).toHaveLength(12);
      expect(fake.aborted).toBe(0);
      // it waited for its calls to finish (≤ LLM_MS) rather than its 30 s grace period
      expect(exitedAfter).toBeLessThan(LLM_MS + 5_000);
      const latest = Math.max(...fake.requests.map((r) => r.at));
      for (const t of turns) {
        const [end] = await endings(alice, t.conversationId);
        expect(new Date(end.occurredAt).getTime()).toBeLessThanOrEqual(latest + LLM_MS + 1_000);
      }
    }, 120_000);
  });

  describe('Postgres stopped for 5 s, then started', () => {
    let pg: PrivatePostgres;
    let stack: Stack;
    beforeAll(async () => {
      pg = await startPrivatePostgres();
      stack = await startStack({
        workers: 2,
        database: await pg.database(),
        env: { ...fakeAnthropicEnv(fake.url), WORKER_CONCURRENCY: '8', SSE_PING_MS: '200' },
      });
    }, 120_000);
    afterAll(async () => {
      await stack?.stop();
      pg?.destroy();
    });

    it('answers 503 with Retry-After, keeps SSE open, and appends every bought answer once it is back', async () => {
      const alice = clientFor(stack.base, `outage-${randomUUID()}`);
      const turns = await postTurns(alice, 12);
      const watched = turns[0].conversationId;
      const sse = openStream(`${stack.base}/v1/conversations/${watched}/stream`, { token: alice.token });
      const rawAbort = new AbortController();
      const raw = await fetch(`${stack.base}/v1/conversations/${watched}/stream`, {
        headers: { authorization: `Bearer ${alice.token}` },
        signal: rawAbort.signal,
      });
      let rawText = '';
      const reading = (async () => {
        const decoder = new TextDecoder();
        for await (const chunk of raw.body as unknown as AsyncIterable<Uint8Array>) rawText += decoder.decode(chunk);
      })().catch(() => undefined);
      await sse.until('the stored UserMessagePosted', (f) => f.some((x) => x.event === 'UserMessagePosted'));
      await fake.waitFor('12 calls in flight', () => fake.requests.length === 12, 30_000);

      pg.stop();
      const down = Date.now();
      const post = await postMessage(alice, watched, 'during the outage');
      const read = await alice.api.GET('/v1/conversations/{id}', { params: { path: { id: watched } } });
      const list = await alice.api.GET('/v1/conversations');
      for (const r of [post, read, list] as Array<ApiResult<unknown, { code: string }>>) {
        expect(expectProblem(r, 503).code).toBe('database_unavailable');
        expect(Number(r.response.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      expect((await alice.api.GET('/readyz')).response.status).toBe(503);
      const pingsBefore = rawText.split(': ping').length;
      await waitFor('5 s of outage', () => Date.now() - down >= 5_000, 10_000, 100);
      expect(rawText.split(': ping').length).toBeGreaterThan(pingsBefore); // the open stream is alive
      expect(fake.requests).toHaveLength(12); // every call finished during the outage

      pg.start();
      await expectEachAnsweredOnce(alice, turns, stack);
      // a call made twice shows the jobs taken over from a worker whose locks lapsed meanwhile
      expect({ requests: fake.requests.length, takeovers: takeovers(stack.workers) }).toEqual({
        requests: 12,
        takeovers: expect.any(Array),
      });
      expect(fake.aborted).toBe(0);
      expectOk(await alice.api.GET('/v1/conversations/{id}', { params: { path: { id: watched } } }), 200);

      // the stream carried on: the reply arrived on it, nothing twice
      await sse.until('the reply on the stream', (f) => f.some((x) => x.event === 'AssistantReplied'), 30_000);
      const ids = sse.durable().map((f) => f.id);
      expect(new Set(ids).size).toBe(ids.length);
      await waitFor('the raw stream to see the reply', () => rawText.includes('event: AssistantReplied'), 10_000);
      sse.close();
      rawAbort.abort();
      await reading;
    }, 180_000);
  });

  describe('a deploy while Postgres is away: the grace period ends before the answers are stored', () => {
    let pg: PrivatePostgres;
    let stack: Stack;
    beforeAll(async () => {
      pg = await startPrivatePostgres();
      stack = await startStack({
        workers: 1,
        database: await pg.database(),
        env: { ...fakeAnthropicEnv(fake.url), WORKER_SHUTDOWN_GRACE_MS: '500' },
      });
    }, 120_000);
    afterAll(async () => {
      await stack?.stop();
      pg?.destroy();
    });

    it('hands the turns back with their answers kept; the next worker stores them without a new call', async () => {
      const alice = clientFor(stack.base, `handback-${randomUUID()}`);
      const turns = await postTurns(alice, 4);
      await fake.waitFor('4 calls in flight', () => fake.requests.length === 4, 30_000);
      pg.stop();
      // the calls finish while the database is away: four answers bought, none stored
      await waitFor(
        'the calls to finish',
        () => Date.now() - Math.max(...fake.requests.map((r) => r.at)) > LLM_MS + 500,
        15_000,
        100,
      );
      const victim = stack.workers[0];
      victim.child.kill('SIGTERM');
      await exited(victim);

      await stack.startWorker();
      pg.start();
      await expectEachAnsweredOnce(alice, turns, stack);
      expect(fake.requests).toHaveLength(4);
    }, 120_000);
  });

  describe('a deploy: SIGTERM to one of two API replicas', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({ apis: 2, env: { ...fakeAnthropicEnv(fake.url), SSE_RETRY_MS: '5000' } });
    }, 60_000);
    afterAll(() => stack?.stop());

    it('ends its SSE streams with a short retry hint and exits; the client resumes on the other replica', async () => {
      const [leaving, staying] = stack.apis;
      const alice = clientFor(staying.base, `api-deploy-${randomUUID()}`);
      const id = await newConversation(alice);
      const raw = await fetch(`${leaving.base}/v1/conversations/${id}/stream`, {
        headers: { authorization: `Bearer ${alice.token}` },
      });
      let text = '';
      const decoder = new TextDecoder();
      const read = (async () => {
        for await (const chunk of raw.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk);
      })();
      await waitFor('the stored ConversationStarted', () => text.includes('event: ConversationStarted'));
      const signalledAt = Date.now();
      leaving.child.kill('SIGTERM');
      await read; // the server ended the stream
      await exited(leaving);
      expect(Date.now() - signalledAt).toBeLessThan(5_000);
      expect(text.trimEnd().endsWith('retry: 100')).toBe(true);

      // the client comes back with Last-Event-ID on the other replica and misses nothing
      expectOk(await postMessage(alice, id, 'after the deploy'), 202);
      const resumed = openStream(`${staying.base}/v1/conversations/${id}/stream`, {
        token: alice.token,
        headers: { 'last-event-id': '1' },
      });
      await resumed.until(
        'the reply on the other replica',
        (f) => f.some((x) => x.event === 'AssistantReplied'),
        30_000,
      );
      expect(resumed.durable()[0].id).toBe('2');
      resumed.close();
    }, 60_000);
  });
});
