import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '@parley/platform';
import { ConversationEvent, conversationStreamId } from '@parley/conversation';
import { EventStore, StoredEvent } from '@parley/event-store';
import { priceTableWith, roundUsd } from '@parley/agent';
import { ConversationsProjection, ReadModelQueries } from '@parley/read-models';
import { UsageService } from '../../apps/api/src/usage/usage.service';
import { countingPool } from '../support/counting-pool';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/** The shipped prices (no LLM_PRICES here). */
const { costUsd } = priceTableWith();

type Data<T extends ConversationEvent['type']> = Extract<ConversationEvent, { type: T }>['data'];
const usage = { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

/** The events of one agent turn that searched the book once with `toolUseId`. */
function turn(toolUseId: string, query: string): ConversationEvent[] {
  const turnId = randomUUID();
  return [
    { type: 'UserMessagePosted', data: { messageId: randomUUID(), turnId, content: query } },
    {
      type: 'ToolInvoked',
      data: { turnId, toolUseId, name: 'search_book', input: { query }, iteration: 1 },
    } satisfies { type: 'ToolInvoked'; data: Data<'ToolInvoked'> },
    { type: 'ToolResultRecorded', data: { turnId, toolUseId, content: `[1] about ${query}`, isError: false } },
    {
      type: 'AssistantReplied',
      data: {
        turnId,
        messageId: randomUUID(),
        content: `the answer about ${query}`,
        model: 'scripted-1',
        stopReason: 'end_turn',
        usage,
        costUsd: 0,
        citations: [],
        iterations: 2,
        latencyMs: 5,
      },
    },
  ];
}

describe(ConversationsProjection.name, () => {
  let db: TestDatabase;
  let store: EventStore;
  const projection = new ConversationsProjection();

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
  });
  afterAll(() => db.drop());

  /** Appends a conversation's events to the log and returns them as stored. */
  async function conversationOf(events: ConversationEvent[]): Promise<{ id: string; stored: StoredEvent[] }> {
    const id = randomUUID();
    const started: ConversationEvent = {
      type: 'ConversationStarted',
      data: { ownerId: 'reader', bookId: null, title: null, readingPosition: null },
    };
    const { events: stored } = await store.append(
      conversationStreamId(id),
      [started, ...events].map((e) => ({ id: randomUUID(), ...e })),
      { expectedVersion: 'no_stream' },
    );
    return { id, stored };
  }

  const feed = async (events: StoredEvent[]) => {
    for (const e of events) await projection.applyBatch([e], db.pool);
  };

  const messagesOf = async (conversationId: string) =>
    (await db.pool.query('SELECT * FROM messages WHERE conversation_id = $1 ORDER BY version', [conversationId])).rows;

  /** The conversation's read models: its row and its messages. */
  const readModelsOf = async (conversationId: string) => ({
    conversation: (await db.pool.query('SELECT * FROM conversations WHERE id = $1', [conversationId])).rows,
    messages: await messagesOf(conversationId),
  });

  it("counts a history cut (HistorySummarized, HistoryTrimmed) as the conversation's version and activity, not as a message", async () => {
    const [posted, ...rest] = turn('toolu_cut', 'the lamp');
    const turnId = (posted.data as Data<'UserMessagePosted'>).turnId;
    const cuts: ConversationEvent[] = [
      {
        type: 'HistorySummarized',
        data: { turnId, coversVersions: [1, 1], summary: 'so far', usage, model: 'scripted-1', costUsd: 0 },
      },
      { type: 'HistoryTrimmed', data: { turnId, droppedVersions: [2, 2], reason: 'x' } },
    ];
    const { id, stored } = await conversationOf([posted, ...cuts, ...rest]);
    await feed(stored);
    const { conversation, messages } = await readModelsOf(id);
    expect(conversation[0].version).toBe(stored.length);
    expect(messages.map((m) => m.role)).toEqual(['user', 'tool_result', 'assistant']);
  });

  it("shows a tool result with its own turn's invocation when an earlier turn reused the tool id", async () => {
    const { id, stored } = await conversationOf([...turn('toolu_same', 'first'), ...turn('toolu_same', 'second')]);
    await feed(stored);
    const results = (await messagesOf(id)).filter((m) => m.role === 'tool_result');
    expect(results.map((m) => m.tool_invocations)).toEqual([
      [{ toolUseId: 'toolu_same', name: 'search_book', input: { query: 'first' } }],
      [{ toolUseId: 'toolu_same', name: 'search_book', input: { query: 'second' } }],
    ]);
  });

  it('writes the usage rows the migrations 1732240000015 and 020 backfill from the log for conversations already projected', async () => {
    const failed: ConversationEvent = {
      type: 'TurnFailed',
      data: { turnId: randomUUID(), code: 'x', message: 'm', retryable: false },
    };
    const { id, stored } = await conversationOf([...turn('toolu_u1', 'lamp'), ...turn('toolu_u2', 'ship'), failed]);
    await feed(stored);
    const rows = async () =>
      (await db.pool.query('SELECT * FROM usage_records ORDER BY conversation_id, version')).rows;
    const projected = await rows();
    expect(projected.filter((r) => r.conversation_id === id).map((r) => r.kind)).toEqual([
      'tool_call',
      'answer',
      'tool_call',
      'answer',
      'failure',
    ]);
    // the migration's backfill statement, as it ran on the read models of the release before
    const migration = readFileSync(
      path.join(projectRoot(__dirname), 'migrations/1732240000015_usage-records.sql'),
      'utf8',
    );
    const backfill = migration.slice(
      migration.indexOf('INSERT INTO usage_records'),
      migration.indexOf('-- Down Migration'),
    );
    // and the reader and event each row names, added by the ledger's migration
    const ledger = readFileSync(
      path.join(projectRoot(__dirname), 'migrations/1732240000020_erasure-and-ledger.sql'),
      'utf8',
    );
    const fills = ledger.match(/UPDATE usage_records u SET[^;]*;/g)!;
    expect(fills).toHaveLength(2);
    // every conversation of this database, as the migrations meet them: a table of the old shape, new and empty
    const c = await db.pool.connect(); // a temporary table lives on its connection
    try {
      await c.query('CREATE TEMP TABLE usage_then (LIKE usage_records INCLUDING DEFAULTS)');
      await c.query('ALTER TABLE usage_then ALTER COLUMN event_id DROP NOT NULL');
      const into = (sql: string) => sql.replace(/(INSERT INTO|UPDATE) usage_records/, '$1 usage_then');
      await c.query(into(backfill));
      for (const fill of fills) await c.query(into(fill));
      const then = await c.query('SELECT * FROM usage_then ORDER BY conversation_id, version');
      expect(then.rows).toEqual(projected);
    } finally {
      c.release();
    }
    expect(projected.filter((r) => r.conversation_id === id).every((r) => r.owner_id !== null)).toBe(true);
  });

  it('prices the calls of a turn that did not reply as they were bought: list price, or half through the Message Batches API', async () => {
    const model = 'claude-sonnet-5-5';
    const spent = {
      inputTokens: 12_000,
      outputTokens: 800,
      cacheReadInputTokens: 3_000,
      cacheCreationInputTokens: 500,
    };
    /** a turn whose first call asked for a search, then failed */
    const failedAfterACall = (batched: boolean): ConversationEvent[] => {
      const turnId = randomUUID();
      return [
        { type: 'UserMessagePosted', data: { messageId: randomUUID(), turnId, content: 'q' } },
        {
          type: 'ToolInvoked',
          data: {
            turnId,
            toolUseId: `toolu_${randomUUID()}`,
            name: 'search_book',
            input: { query: 'q' },
            iteration: 1,
            usage: spent,
            model,
            ...(batched ? { batched: true } : {}),
          },
        },
        { type: 'TurnFailed', data: { turnId, code: 'x', message: 'm', retryable: false } },
      ];
    };
    const { id, stored } = await conversationOf([...failedAfterACall(true), ...failedAfterACall(false)]);
    await feed(stored);
    const report = await new UsageService(new ReadModelQueries(async () => db.pool), priceTableWith()).ofConversation(
      'reader',
      id,
    );
    expect(report).toMatchObject({ turns: 2, toolCalls: 2, failures: 2, inputTokens: 24_000 });
    const list = costUsd(model, spent);
    const batched = costUsd(model, spent, { batched: true });
    expect(batched).toBeCloseTo(list / 2, 5);
    expect(report.costUsd).toBe(roundUsd(list + batched));
    expect(report.costUsd).toBeLessThan(roundUsd(2 * list)); // both at list price, as before ToolInvoked.batched
    expect(report.byModel[model].costUsd).toBe(roundUsd(list + batched));
  });

  it("counts a stopped call's tokens whether its turn replied or not: list price, or half through the Message Batches API", async () => {
    const model = 'claude-sonnet-5-5';
    const billed = { inputTokens: 9_000, outputTokens: 40, cacheReadInputTokens: 1_000, cacheCreationInputTokens: 0 };
    const stopped = (
      turnId: string,
      reason: Data<'ModelCallStopped'>['reason'],
      batched = false,
    ): ConversationEvent => ({
      type: 'ModelCallStopped',
      data: { turnId, iteration: 1, model, usage: billed, reason, ...(batched ? { batched } : {}) },
    });
    // a turn that replied after a broken attempt, and a turn cancelled while the model streamed
    const replied = turn(`toolu_${randomUUID()}`, 'the lamp');
    const repliedTurn = (replied[0].data as Data<'UserMessagePosted'>).turnId;
    const cancelled = randomUUID();
    const { id, stored } = await conversationOf([
      replied[0],
      stopped(repliedTurn, 'broken'),
      ...replied.slice(1),
      { type: 'UserMessagePosted', data: { messageId: randomUUID(), turnId: cancelled, content: 'q' } },
      { type: 'TurnCancelled', data: { turnId: cancelled } },
      stopped(cancelled, 'cancelled', true),
    ]);
    await feed(stored);
    const kinds = await db.pool.query('SELECT kind FROM usage_records WHERE conversation_id = $1 ORDER BY version', [
      id,
    ]);
    expect(kinds.rows.map((r) => r.kind)).toEqual(['stopped_call', 'tool_call', 'answer', 'cancel', 'stopped_call']);
    const report = await new UsageService(new ReadModelQueries(async () => db.pool), priceTableWith()).ofConversation(
      'reader',
      id,
    );
    expect(report).toMatchObject({ turns: 2, toolCalls: 1, failures: 0, inputTokens: 2 * 9_000 + usage.inputTokens });
    const cost = roundUsd(costUsd(model, billed) + costUsd(model, billed, { batched: true }));
    expect(cost).toBeGreaterThan(0);
    expect(report.byModel[model]).toMatchObject({ inputTokens: 18_000, outputTokens: 80, costUsd: cost });
    expect(report.costUsd).toBe(cost);
  });

  describe('one statement a batch', () => {
    it('projects a live conversation event by event with one statement each, and the rows a projection reading them back writes', async () => {
      const { id, stored } = await conversationOf([
        ...turn(`toolu_${randomUUID()}`, 'the Hatter'),
        { type: 'ConversationRenamed', data: { title: 'Tea' } },
        ...turn(`toolu_${randomUUID()}`, 'the Queen'),
      ]);
      const live = new ConversationsProjection();
      const { pool, statements } = countingPool(db.pool);
      const perEvent: number[] = [];
      for (const e of stored) {
        const before = statements.length;
        await live.applyBatch([e], pool);
        perEvent.push(statements.length - before);
      }
      // the start reads whether the stream was deleted and the row; every later event is its write alone
      expect(perEvent.slice(1)).toEqual(stored.slice(1).map(() => 1));
      const fromMemory = await readModelsOf(id);
      expect(fromMemory.messages.filter((m) => m.role === 'assistant').map((m) => m.tool_invocations)).toEqual([
        [expect.objectContaining({ name: 'search_book', input: { query: 'the Hatter' } })],
        [expect.objectContaining({ name: 'search_book', input: { query: 'the Queen' } })],
      ]);

      await db.pool.query('DELETE FROM conversations WHERE id = $1', [id]);
      const reading = new ConversationsProjection();
      for (const e of stored) {
        reading.forget(); // nothing kept: every batch reads its rows and tool calls back
        await reading.applyBatch([e], db.pool);
      }
      expect(await readModelsOf(id)).toEqual(fromMemory);
    });

    it('writes nothing, and says so, when the checkpoint is not where the batch started', async () => {
      const consumer = `read-models-${randomUUID()}`;
      const { id, stored } = await conversationOf(turn(`toolu_${randomUUID()}`, 'the Duchess'));
      const last = stored[stored.length - 1];
      const to = { transactionId: last.transactionId, position: last.position };
      const sut = new ConversationsProjection();
      const elsewhere = { transactionId: '1', position: '1' };
      await db.pool.query(
        `INSERT INTO consumer_checkpoints (consumer, transaction_id, position) VALUES ($1, $2::xid8, $3)`,
        [consumer, elsewhere.transactionId, elsewhere.position],
      );
      // the runner thinks the checkpoint is at the start, another runner has moved it
      expect(await sut.applyBatch(stored, db.pool, { consumer, from: { transactionId: '0', position: '0' }, to })).toBe(
        false,
      );
      expect(await readModelsOf(id)).toEqual({ conversation: [], messages: [] });
      sut.forget(); // as its runner does on losing the chain
      expect(await sut.applyBatch(stored, db.pool, { consumer, from: elsewhere, to })).toBe(true);
      expect((await readModelsOf(id)).messages).toHaveLength(3);
      const { rows } = await db.pool.query(
        'SELECT transaction_id::text AS t, position::text AS p FROM consumer_checkpoints WHERE consumer = $1',
        [consumer],
      );
      expect(rows).toEqual([{ t: to.transactionId, p: String(to.position) }]);
    });
  });

  describe('a redelivered event (the log delivering it twice) changes nothing', () => {
    const history = (): ConversationEvent[] => {
      const failed = randomUUID();
      const cancelled = randomUUID();
      return [
        { type: 'ConversationRenamed', data: { title: 'Tea with the Hatter' } },
        { type: 'ReadingPositionChanged', data: { readingPosition: 7 } },
        ...turn(`toolu_${randomUUID()}`, 'the Hatter'),
        { type: 'UserMessagePosted', data: { messageId: randomUUID(), turnId: failed, content: 'and the Dormouse?' } },
        { type: 'TurnFailed', data: { turnId: failed, code: 'llm_unavailable', message: 'down', retryable: true } },
        { type: 'UserMessagePosted', data: { messageId: randomUUID(), turnId: cancelled, content: 'never mind' } },
        { type: 'TurnCancelled', data: { turnId: cancelled } },
        { type: 'ReadingPositionChanged', data: { readingPosition: 8 } },
        ...turn(`toolu_${randomUUID()}`, 'the Queen'),
        { type: 'ConversationRenamed', data: { title: 'Croquet' } },
      ];
    };

    /** Feeds the events once, then again in order and in random orders, checking the read models after each. */
    async function expectRedeliveryHarmless(id: string, stored: StoredEvent[]) {
      await feed(stored);
      const once = await readModelsOf(id);
      await feed(stored);
      expect(await readModelsOf(id)).toEqual(once);
      await fc.assert(
        fc.asyncProperty(fc.shuffledSubarray(stored, { minLength: stored.length }), async (shuffled) => {
          await feed(shuffled);
          expect(await readModelsOf(id)).toEqual(once);
        }),
        { numRuns: 15 },
      );
      return once;
    }

    /** Feeds the events as batches of the given sizes (cycling), each batch in one transaction. */
    async function feedInBatches(events: StoredEvent[], sizes: number[]) {
      for (let at = 0, k = 0; at < events.length; k++) {
        const batch = events.slice(at, at + sizes[k % sizes.length]);
        await projection.applyBatch(batch, db.pool);
        at += batch.length;
      }
    }

    it('builds the same read models from batches of any size as from one event at a time', async () => {
      const { id, stored } = await conversationOf(history());
      await feed(stored);
      const once = await readModelsOf(id);
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 1, max: stored.length }), { minLength: 1, maxLength: 5 }),
          async (sizes) => {
            await db.pool.query('DELETE FROM conversations WHERE id = $1', [id]); // its messages go with it
            projection.forget(); // the rows it kept are gone from under it
            await feedInBatches(stored, sizes);
            expect(await readModelsOf(id)).toEqual(once);
          },
        ),
        { numRuns: 15 },
      );
      // a batch holding every event twice (redelivered within the batch) changes nothing either
      await projection.applyBatch([...stored, ...stored], db.pool);
      expect(await readModelsOf(id)).toEqual(once);
    });

    it('leaves nothing of a conversation deleted within the batch that started it', async () => {
      const { id, stored } = await conversationOf([
        ...history(),
        { type: 'ConversationDeleted', data: {} as Record<string, never> },
      ]);
      await projection.applyBatch(stored, db.pool);
      expect(await readModelsOf(id)).toEqual({ conversation: [], messages: [] });
    });

    it('keeps a live conversation as it was', async () => {
      const { id, stored } = await conversationOf(history());
      const once = await expectRedeliveryHarmless(id, stored);
      expect(once.conversation).toMatchObject([{ title: 'Croquet', reading_position: 8, message_count: 6 }]);
      expect(once.messages).toHaveLength(8);
    });

    it('does not bring a deleted conversation back', async () => {
      const { id, stored } = await conversationOf([
        ...history(),
        { type: 'ConversationDeleted', data: {} as Record<string, never> },
      ]);
      const once = await expectRedeliveryHarmless(id, stored);
      expect(once).toEqual({ conversation: [], messages: [] });
    });
  });
});
