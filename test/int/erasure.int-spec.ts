import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { AGENT_TURNS_QUEUE, runTurnJobId } from '@parley/agent';
import { BOOK_INGEST_QUEUE } from '@parley/books';
import { ConversationEvent, conversationStreamId, forkEvents } from '@parley/conversation';
import { Erasures } from '@parley/erasure';
import {
  CheckpointedConsumerRunner,
  checkpointOf,
  EventStore,
  StoredEvent,
  WrongExpectedVersionError,
} from '@parley/event-store';
import { ConversationsProjection, ReadModelQueries, rebuildReadModels, UsageLedger } from '@parley/read-models';
import {
  assistantReplied,
  conversationDeleted,
  conversationRenamed,
  conversationStarted,
  givenConversation,
  userMessagePosted,
  withIds,
} from '../support/factories/events';
import { createTestDatabase, redisUrl, TestDatabase } from '../support/test-database';
import { waitFor } from '../support/wait-for';

const usage = { inputTokens: 1_000, outputTokens: 100, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

/** Erasure in the event store and its readers: tailers, projections, rebuilds, and a log from before erasure. */
describe('erasure (in process, real Postgres and Redis)', () => {
  let db: TestDatabase;
  let store: EventStore;
  let redis: Redis;
  let queues: Queue[];
  let sut: Erasures;
  const prefix = `terase${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
    redis = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    queues = [AGENT_TURNS_QUEUE, BOOK_INGEST_QUEUE].map((name) => new Queue(name, { connection: redis, prefix }));
    const [turns, ingest] = queues;
    sut = Erasures.on(db.pool, { turns, ingest });
  });
  afterAll(async () => {
    await Promise.all(queues.map((q) => q.obliterate({ force: true }).then(() => q.close())));
    redis.disconnect();
    await db.drop();
  });

  /** A conversation of the owner's with one answered question. */
  async function answered(owner: string, question = 'Who stole the tarts?') {
    const id = randomUUID();
    const turnId = randomUUID();
    const { events } = await givenConversation(store, id, [
      conversationStarted({ ownerId: owner }),
      userMessagePosted({ content: question, turnId }),
      assistantReplied({ turnId, content: 'The Knave.', usage, costUsd: 0.0045 }),
    ]);
    return { id, turnId, events };
  }
  /** Runs the read-models consumer until the conversation's row is there (or gone). */
  const projected = (id: string, there = true) => {
    const runner = new CheckpointedConsumerRunner(store, new ConversationsProjection());
    return waitFor(`the read model to ${there ? 'show' : 'drop'} ${id}`, async () => {
      await runner.drain();
      const { rows } = await db.pool.query('SELECT 1 FROM conversations WHERE id = $1', [id]);
      return rows.length === (there ? 1 : 0);
    });
  };
  const streamOf = (id: string) => store.readStream<ConversationEvent>(conversationStreamId(id));
  const tombstone = () => ({
    id: randomUUID(),
    type: 'ConversationErased',
    data: { erasedEvents: 0, subject: 'conversation' },
  });

  describe('EventStore.eraseStream', () => {
    it('leaves the tombstone alone in the stream, in the transaction of `within`', async () => {
      const { id } = await answered('ann');
      const seen: number[] = [];
      const { erasedEvents } = await store.eraseStream(conversationStreamId(id), tombstone(), {
        expectedVersion: 3,
        within: async (_tx, erased) => void seen.push(...erased.map((e) => e.version)),
      });
      expect(erasedEvents).toBe(3);
      expect(seen).toEqual([1, 2, 3]);
      expect((await streamOf(id)).map((e) => [e.version, e.type])).toEqual([[4, 'ConversationErased']]);
    });

    it('erases nothing when the stream moved past the version it was asked at, or `within` fails', async () => {
      const { id } = await answered('ann');
      const streamId = conversationStreamId(id);
      await expect(store.eraseStream(streamId, tombstone(), { expectedVersion: 2 })).rejects.toBeInstanceOf(
        WrongExpectedVersionError,
      );
      const failing = store.eraseStream(streamId, tombstone(), {
        expectedVersion: 3,
        within: async () => {
          throw new Error('the ledger is away');
        },
      });
      await expect(failing).rejects.toThrow('the ledger is away');
      expect(await streamOf(id)).toHaveLength(3);
    });

    it('keeps the log append-only for everything else: a hand-written delete or update is refused', async () => {
      const { id } = await answered('ann');
      const streamId = conversationStreamId(id);
      await expect(db.pool.query('DELETE FROM events WHERE stream_id = $1', [streamId])).rejects.toThrow('append-only');
      await expect(db.pool.query(`UPDATE events SET data = '{}' WHERE stream_id = $1`, [streamId])).rejects.toThrow(
        'append-only',
      );
      // naming another stream as the one being erased does not open this one
      const c = await db.pool.connect();
      try {
        await c.query('BEGIN');
        await c.query(`SELECT set_config('parley.erasing_stream', 'conversation-other', true)`);
        await expect(c.query('DELETE FROM events WHERE stream_id = $1', [streamId])).rejects.toThrow('append-only');
      } finally {
        await c.query('ROLLBACK');
        c.release();
      }
      expect(await streamOf(id)).toHaveLength(3);
    });

    it('a tailer from before the erasure reads on without a gap and meets the tombstone, not the erased events', async () => {
      const before = await answered('ann');
      const from = checkpointOf(before.events[2]);
      const { id } = await answered('ann');
      await store.append(conversationStreamId(id), [conversationRenamed('late')], { expectedVersion: 3 });
      const after = await answered('ann');
      await store.eraseStream(conversationStreamId(id), tombstone(), { expectedVersion: 4 });
      // (the log is read below the oldest transaction in flight anywhere: other suites may hold one a moment)
      const read = await waitFor('the tailer to reach the tombstone', async () => {
        const events: StoredEvent[] = [];
        for (let at = from; ;) {
          const batch = await store.readAll({ after: at, limit: 2 });
          if (batch.length === 0) break;
          events.push(...batch);
          at = checkpointOf(batch[batch.length - 1]);
        }
        return events.some((e) => e.type === 'ConversationErased') && events;
      });
      expect(read.map((e) => [e.streamId, e.type])).toEqual([
        ...after.events.map((e) => [e.streamId, e.type]),
        [conversationStreamId(id), 'ConversationErased'],
      ]);
    });
  });

  describe(Erasures.name, () => {
    it('erases a conversation: read models, snapshots and the jobs of its turns go; its spending stays in the ledger', async () => {
      const owner = `reader-${randomUUID()}`;
      const { id, turnId, events } = await answered(owner);
      const projection = new ConversationsProjection();
      await projection.applyBatch(events, db.pool);
      await db.pool.query(
        `INSERT INTO fold_snapshots (stream_id, fold, version, state_json) VALUES ($1, 'f', 3, '{}')`,
        [conversationStreamId(id)],
      );
      await queues[0].add(
        'run-turn',
        { conversationId: id, turnId, kept: { step: 's', events: [] } },
        {
          jobId: runTurnJobId(id, turnId),
        },
      );
      const queries = new ReadModelQueries(() => Promise.resolve(db.pool));
      const spent = await queries.usage(owner, {});

      const erased = await sut.conversation(owner, id);

      expect(erased).toEqual({ conversationId: id, erasedEvents: 3, unendedTurns: [] });
      const left = async (sql: string) => (await db.pool.query(sql, [id])).rows;
      expect(await left('SELECT 1 FROM conversations WHERE id = $1')).toEqual([]);
      expect(await left('SELECT 1 FROM messages WHERE conversation_id = $1')).toEqual([]);
      expect(await left(`SELECT 1 FROM fold_snapshots WHERE stream_id = 'conversation-' || $1`)).toEqual([]);
      expect(await queues[0].getJob(runTurnJobId(id, turnId))).toBeUndefined();
      expect(await queries.usage(owner, {})).toEqual(spent);
      await expect(sut.conversation(owner, id)).rejects.toMatchObject({ code: 'not_found' });
    });

    it("answers not_found for another reader's conversation, and erases nothing", async () => {
      const { id } = await answered('ann');
      await expect(sut.conversation('mallory', id)).rejects.toMatchObject({ code: 'not_found' });
      expect(await streamOf(id)).toHaveLength(3);
    });

    it('upgrades a log written before erasure: its deleted conversations are erased by the sweep, their spending restored', async () => {
      // given a conversation deleted by the release before (ConversationDeleted; its usage rows went with its read model)
      const owner = `reader-${randomUUID()}`;
      const { id } = await answered(owner);
      await store.append(conversationStreamId(id), [conversationDeleted()], { expectedVersion: 3 });
      const live = await answered(owner, 'And the queen?');
      await rebuildReadModels(store);
      const queries = new ReadModelQueries(() => Promise.resolve(db.pool));
      await projected(live.id);
      expect((await queries.usage(owner, {}))[0]).toMatchObject({ turns: 1 });
      // when a worker of this release sweeps
      const swept = await sut.sweep();
      // then the deleted one is erased and its answer is back in the ledger; the other is untouched
      expect(swept.erased).toBeGreaterThanOrEqual(1);
      expect((await streamOf(id)).map((e) => e.type)).toEqual(['ConversationErased']);
      expect(await streamOf(live.id)).toHaveLength(3);
      expect((await queries.usage(owner, {}))[0]).toMatchObject({ turns: 2, costUsd: 0.009 });
      expect((await sut.sweep()).erased).toBe(0);
      // and a rebuild after it brings nothing of it back
      await rebuildReadModels(store);
      await projected(live.id);
      expect((await db.pool.query('SELECT id FROM conversations WHERE owner_id = $1', [owner])).rows).toEqual([
        { id: live.id },
      ]);
    });

    it("keeps an erased account's spend this month under its pseudonym, so erasing hands out no fresh budget", async () => {
      const owner = `reader-${randomUUID()}`;
      const { id, events } = await answered(owner);
      await new ConversationsProjection().applyBatch(events, db.pool);
      const queries = new ReadModelQueries(() => Promise.resolve(db.pool));
      const spent = await queries.usage(owner, {});
      expect(spent[0]).toMatchObject({ costUsd: 0.0045 });

      await sut.account(owner);

      // the same sub still finds this month's spend; the lines no longer name the reader
      expect(await queries.usage(owner, {})).toEqual(spent);
      const lines = await db.pool.query('SELECT owner_id, owner_key FROM usage_records WHERE conversation_id = $1', [
        id,
      ]);
      expect(lines.rows).toEqual([{ owner_id: null, owner_key: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
      // a line paid for while the erasure ran (recorded after it) is no one's by name either
      const late = new UsageLedger(db.pool);
      await late.record([
        {
          event_id: randomUUID(),
          conversation_id: id,
          version: null,
          owner_id: owner,
          turn_id: randomUUID(),
          kind: 'stopped_call',
          model: 'claude-sonnet-5-5',
          input_tokens: 1_000,
          output_tokens: 10,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: 0,
          cost_usd: 0.00315,
          batched: false,
          at: new Date(),
        },
      ]);
      expect((await db.pool.query('SELECT 1 FROM usage_records WHERE owner_id = $1', [owner])).rows).toEqual([]);
      expect((await queries.usage(owner, {}))[0].costUsd).toBeCloseTo(0.0045 + 0.00315, 6);
      // once the month is over, the pseudonym goes: the lines keep the money and are nobody's
      const nextMonth = new Date(Date.now() + 32 * 24 * 3600 * 1000);
      expect(await late.forgetPastPseudonyms(nextMonth)).toBeGreaterThanOrEqual(2);
      expect(await queries.usage(owner, {})).toEqual([]);
      const money = await db.pool.query(
        'SELECT sum(cost_usd)::float8 AS usd FROM usage_records WHERE conversation_id = $1',
        [id],
      );
      expect(money.rows[0].usd).toBeCloseTo(0.0045 + 0.00315, 6);
    });

    it('erases, in the sweep, a fork appended from a conversation after its account erasure had listed it', async () => {
      const owner = `reader-${randomUUID()}`;
      const source = await answered(owner);
      const forkOf = async (of: { id: string; events: StoredEvent[] }) => {
        const forkId = randomUUID();
        const copies = withIds(
          forkEvents(
            { conversationId: of.id, history: of.events as StoredEvent<ConversationEvent>[] },
            of.events.length,
            { userId: owner },
          ),
        );
        return { id: forkId, events: (await givenConversation(store, forkId, copies)).events };
      };
      // the fork read its source before the erasure and appended after the list was taken
      const early = (await streamOf(source.id)) as StoredEvent[];
      await sut.account(owner);
      const late = await forkOf({ id: source.id, events: early });
      const lateOfLate = await forkOf(late);
      expect(await streamOf(late.id)).toHaveLength(3);

      const swept = await sut.sweep();

      expect(swept.lateForks).toBe(1);
      expect((await streamOf(late.id)).map((e) => e.type)).toEqual(['ConversationErased']);
      // its own fork is found on the next pass, as a fork of an erased one
      expect((await sut.sweep()).lateForks).toBe(1);
      expect((await streamOf(lateOfLate.id)).map((e) => e.type)).toEqual(['ConversationErased']);
      expect((await sut.sweep()).lateForks).toBe(0);
    });

    it("erases a book's conversations with their forks", async () => {
      const owner = `reader-${randomUUID()}`;
      const bookId = randomUUID();
      const id = randomUUID();
      const { events } = await givenConversation(store, id, [
        conversationStarted({ ownerId: owner, bookId }),
        userMessagePosted({ content: 'q' }),
      ]);
      const forkId = randomUUID();
      await givenConversation(
        store,
        forkId,
        withIds(
          forkEvents({ conversationId: id, history: events as StoredEvent<ConversationEvent>[] }, 2, {
            userId: owner,
          }),
        ),
      );

      const erased = await sut.book(owner, bookId);

      expect(erased.conversations.map((c) => c.conversationId).sort()).toEqual([id, forkId].sort());
      expect((await streamOf(forkId)).map((e) => e.type)).toEqual(['ConversationErased']);
    });

    it('a projection that meets the tombstone drops what it had projected of the conversation', async () => {
      const owner = `reader-${randomUUID()}`;
      const { id, events } = await answered(owner);
      await projected(id);
      // an erasure that did not reach the read models (say, a projection holding the rows in a batch then)
      await store.eraseStream(conversationStreamId(id), tombstone(), { expectedVersion: events.length });
      await projected(id, false);
    });
  });
});
