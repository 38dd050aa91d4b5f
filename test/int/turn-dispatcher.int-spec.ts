import { randomBytes, randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import {
  AGENT_TURNS_QUEUE,
  enqueueTurn,
  enqueueTurns,
  JobName,
  runTurnJobId,
  TurnToEnqueue,
  wakeTurn,
} from '@parley/agent';
import { loadConfig } from '@parley/config';
import { conversationStreamId } from '@parley/conversation';
import { EventStore, inSpan, StoredEvent } from '@parley/event-store';
import { ConversationFolds } from '../../apps/worker/src/turns/conversation-folds';
import { TurnDispatcher } from '../../apps/worker/src/turns/turn-dispatcher.service';
import { TurnSequencer } from '../../apps/worker/src/turns/turn-sequencer';
import { redisUrl } from '../support/test-database';
import { recordedSpans } from '../support/recorded-spans';
import { waitFor } from '../support/wait-for';

/** The dispatcher's enqueues on a real queue in Redis: the jobs `enqueueTurn` makes, a batch's in one round trip. */
describe(TurnDispatcher.name, () => {
  const { sdk, ended } = recordedSpans();
  const queues: Queue[] = [];
  const connections: Redis[] = [];
  /** A queue of its own (a fresh prefix), on a connection of its own whose socket writes are counted. */
  async function newQueue(): Promise<{ queue: Queue; writes: () => number }> {
    const redis = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    const queue = new Queue(AGENT_TURNS_QUEUE, { connection: redis, prefix: `t${randomBytes(4).toString('hex')}` });
    connections.push(redis);
    queues.push(queue);
    await queue.waitUntilReady();
    await queue.getJobCounts(); // the connection's own setup done before counting
    const socket = (redis as unknown as { stream: Socket }).stream;
    const write = socket.write.bind(socket) as (...a: unknown[]) => boolean;
    let writes = 0;
    socket.write = ((...a: unknown[]) => (writes++, write(...a))) as Socket['write'];
    return { queue, writes: () => writes };
  }
  const traceparentOf = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`;
  const newTraceparent = () => traceparentOf(randomBytes(16).toString('hex'), randomBytes(8).toString('hex'));
  const sendSpanOf = (job: Job) => {
    const [, traceId, spanId] = (job.data.traceparent as string).split('-');
    return ended.find((s) => s.spanContext().traceId === traceId && s.spanContext().spanId === spanId);
  };

  const conversationId = randomUUID();
  let version = 0;
  const stored = (type: string, data: object, traceparent?: string): StoredEvent => ({
    id: randomUUID(),
    streamId: conversationStreamId(conversationId),
    version: ++version,
    position: String(version),
    transactionId: '1',
    metadata: traceparent ? { traceparent } : {},
    occurredAt: new Date(),
    type,
    data,
  });
  const posted = (turnId: string, traceparent?: string) =>
    stored('UserMessagePosted', { messageId: randomUUID(), turnId, content: 'hi' }, traceparent);
  const dispatcherOn = (queue: Queue) =>
    new TurnDispatcher(
      {} as EventStore,
      new TurnSequencer(queue, {} as ConversationFolds),
      loadConfig({ AUTH_JWT_SECRET: 'x'.repeat(32), DATABASE_URL: 'postgres://x/y' }),
    );

  beforeAll(() => sdk.start());
  afterAll(async () => {
    for (const queue of queues) await queue.obliterate({ force: true }).then(() => queue.close());
    for (const redis of connections) redis.disconnect();
    await sdk.shutdown();
  });

  it("queues a batch's pending turns in one round trip to Redis, in order, each as enqueueTurn would", async () => {
    const { queue, writes } = await newQueue();
    const [withTrace, withoutTrace] = [newTraceparent(), undefined];
    const before = writes();
    await inSpan('consume turn-dispatcher', {}, () =>
      dispatcherOn(queue).handleBatch([
        posted('answered', newTraceparent()),
        posted('open', withTrace),
        stored('AssistantReplied', { turnId: 'answered', content: 'yes' }),
        posted('untraced', withoutTrace),
        posted('also-open', newTraceparent()),
      ]),
    );
    expect(writes() - before).toBe(1); // one pipeline (a queue.add a turn: 3)
    const waiting = await queue.getJobs(['waiting'], 0, -1, true); // oldest first
    expect(waiting.map((j) => j.data.turnId)).toEqual(['open', 'untraced', 'also-open']);

    // the same turns by enqueueTurn, one at a time, in a queue of their own: the same jobs
    const { queue: single } = await newQueue();
    await inSpan('consume turn-dispatcher', {}, async () => {
      await enqueueTurn(single, conversationId, 'open', withTrace);
      await enqueueTurn(single, conversationId, 'untraced', withoutTrace);
    });
    const outer = ended.filter((s) => s.name === 'consume turn-dispatcher');
    for (const [turnId, traceparent] of [
      ['open', withTrace],
      ['untraced', withoutTrace],
    ] as const) {
      const [bulk, one] = await Promise.all([
        queue.getJob(runTurnJobId(conversationId, turnId)),
        single.getJob(runTurnJobId(conversationId, turnId)),
      ]);
      expect(bulk!.name).toBe(JobName.RunTurn);
      expect(bulk!.name).toBe(one!.name);
      expect(bulk!.opts).toEqual(one!.opts);
      expect(bulk!.data).toEqual({ conversationId, turnId, traceparent: expect.any(String) });
      expect(Object.keys(bulk!.data)).toEqual(Object.keys(one!.data));
      // each job carries a send span of its own, a child of the turn's trace (or, without one, of the caller's span)
      for (const job of [bulk!, one!]) {
        const span = sendSpanOf(job)!;
        expect(span).toBeDefined();
        expect(span.name).toBe(`send ${AGENT_TURNS_QUEUE}`);
        expect(span.kind).toBe(SpanKind.PRODUCER);
        expect(span.attributes).toEqual({
          'messaging.system': 'bullmq',
          'messaging.operation.type': 'send',
          'messaging.destination.name': AGENT_TURNS_QUEUE,
          'messaging.message.id': runTurnJobId(conversationId, turnId),
          'parley.turn.id': turnId,
        });
        const parent = span.parentSpanContext!;
        if (traceparent) expect(traceparentOf(parent.traceId, parent.spanId)).toBe(traceparent);
        else expect(outer.map((s) => s.spanContext().spanId)).toContain(parent.spanId);
      }
    }
  });

  it('queues a far larger batch in chunks, a round trip each', async () => {
    const { queue, writes } = await newQueue();
    const turns: TurnToEnqueue[] = Array.from({ length: 1_001 }, (_, i) => ({ conversationId, turnId: `t${i}` }));
    const before = writes();
    await enqueueTurns(queue, turns);
    await enqueueTurns(queue, []); // nothing to queue: no round trip
    expect(writes() - before).toBe(3);
    expect(await queue.getWaitingCount()).toBe(1_001);
  });

  it('leaves a job already queued or done as it is, as queue.add does (its id exists)', async () => {
    const { queue } = await newQueue();
    const [waiting, done] = ['waiting', 'done'];
    const first = newTraceparent();
    await enqueueTurn(queue, conversationId, done, first);
    const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    connections.push(connection);
    const worker = new Worker(AGENT_TURNS_QUEUE, async () => 'ok', { connection, prefix: queue.opts.prefix });
    const id = runTurnJobId(conversationId, done);
    await waitFor('the turn done', async () => (await queue.getJobState(id)) === 'completed', 5_000);
    await worker.close();
    await enqueueTurn(queue, conversationId, waiting, first);
    const snapshot = async () =>
      Promise.all(
        [waiting, done].map(async (turnId) => {
          const job = (await queue.getJob(runTurnJobId(conversationId, turnId)))!;
          return { state: await job.getState(), data: job.data, timestamp: job.timestamp, opts: job.opts };
        }),
      );
    const before = await snapshot();
    expect(before.map((j) => j.state)).toEqual(['waiting', 'completed']);
    const counts = await queue.getJobCounts();

    await enqueueTurns(queue, [
      { conversationId, turnId: waiting, traceparent: newTraceparent() },
      { conversationId, turnId: done, traceparent: newTraceparent() },
    ]);
    expect(await snapshot()).toEqual(before);
    expect(await queue.getJobCounts()).toEqual(counts);
    expect(ended.filter((s) => s.status.code === SpanStatusCode.ERROR)).toEqual([]);
  });

  describe('wakeTurn: the turn after the one that ended', () => {
    it('runs now when the API queued it delayed, in one round trip', async () => {
      const { queue, writes } = await newQueue();
      const turnId = randomUUID();
      await enqueueTurn(queue, conversationId, turnId, undefined, { turnsAhead: 1 });
      const id = runTurnJobId(conversationId, turnId);
      expect(await queue.getJobState(id)).toBe('delayed');
      const before = writes();
      await wakeTurn(queue, conversationId, turnId);
      expect(writes() - before).toBe(1);
      expect(await queue.getJobState(id)).toBe('waiting');
    });

    it('is queued when its job is gone, and left as it is when it already waits', async () => {
      const { queue } = await newQueue();
      const gone = randomUUID();
      await wakeTurn(queue, conversationId, gone, newTraceparent());
      expect(await queue.getJobState(runTurnJobId(conversationId, gone))).toBe('waiting');

      const waiting = randomUUID();
      await enqueueTurn(queue, conversationId, waiting);
      const job = (await queue.getJob(runTurnJobId(conversationId, waiting)))!;
      await wakeTurn(queue, conversationId, waiting);
      const again = (await queue.getJob(runTurnJobId(conversationId, waiting)))!;
      expect([await again.getState(), again.timestamp, again.data]).toEqual(['waiting', job.timestamp, job.data]);
      expect(await queue.getJobCounts('waiting', 'delayed')).toMatchObject({ waiting: 2, delayed: 0 });
    });
  });
});
