import { createHmac, randomUUID } from 'node:crypto';
import { priceTableWith } from '@parley/agent';
import { ConversationEvent, forkEvents } from '@parley/conversation';
import { EventStore, StoredEvent } from '@parley/event-store';
import { ConversationsProjection, ReadModelQueries } from '@parley/read-models';
import { UsageService } from '../../apps/api/src/usage/usage.service';
import {
  assistantReplied,
  conversationStarted,
  givenConversation,
  toolInvoked,
  userMessagePosted,
  withIds,
} from '../support/factories/events';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/** The shipped prices (no LLM_PRICES here). */
const { costUsd } = priceTableWith();

const model = 'claude-sonnet-4-5';
const firstCall = { inputTokens: 20_000, outputTokens: 300, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
const lastCall = { inputTokens: 24_000, outputTokens: 900, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
const both = {
  inputTokens: firstCall.inputTokens + lastCall.inputTokens,
  outputTokens: firstCall.outputTokens + lastCall.outputTokens,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
};

/** The usage ledger: each call billed once, at the time it was made. */
describe('usage ledger (in process, real Postgres)', () => {
  let db: TestDatabase;
  let store: EventStore;
  let usage: UsageService;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
    usage = new UsageService(new ReadModelQueries(async () => db.pool), priceTableWith());
  });
  afterAll(() => db.drop());

  /** A conversation of `owner` with one turn of two calls: a search, then the answer. */
  async function twoCallTurn(owner: string) {
    const id = randomUUID();
    const turnId = randomUUID();
    const { events } = await givenConversation(store, id, [
      conversationStarted({ ownerId: owner }),
      userMessagePosted({ content: 'Who stole the tarts?', turnId }),
      toolInvoked({ turnId, name: 'search_book', usage: firstCall, model, costUsd: costUsd(model, firstCall) }),
      assistantReplied({ turnId, content: 'The Knave.', model, usage: both, costUsd: costUsd(model, both) }),
    ]);
    return { id, turnId, events };
  }
  /** Feeds the projection as if each event had happened at the time given. */
  const feedAt = async (projection: ConversationsProjection, events: StoredEvent[], at: string[]) => {
    for (const [i, e] of events.entries())
      await projection.applyBatch([{ ...e, occurredAt: new Date(at[i]) }], db.pool);
  };

  it("bills a turn's calls when each was made: a turn across midnight UTC leaves the old month's total as it was", async () => {
    const owner = `reader-${randomUUID()}`;
    const { events } = await twoCallTurn(owner);
    const projection = new ConversationsProjection();
    const times = ['2031-01-31T23:58:00Z', '2031-01-31T23:59:00Z', '2031-01-31T23:59:58Z', '2031-02-01T00:00:03Z'];
    const january = { from: new Date('2031-01-01T00:00:00Z'), to: new Date('2031-02-01T00:00:00Z') };
    const february = { from: new Date('2031-02-01T00:00:00Z'), to: new Date('2031-03-01T00:00:00Z') };

    await feedAt(projection, events.slice(0, 3), times);
    const januaryBefore = await usage.ofOwner(owner, january);
    await feedAt(projection, events.slice(3), times.slice(3));

    const januaryAfter = await usage.ofOwner(owner, january);
    expect(januaryAfter).toEqual(januaryBefore);
    expect(januaryAfter).toMatchObject({
      turns: 0,
      toolCalls: 1,
      inputTokens: 20_000,
      costUsd: costUsd(model, firstCall),
    });
    const feb = await usage.ofOwner(owner, february);
    expect(feb).toMatchObject({ turns: 1, toolCalls: 0, inputTokens: 24_000, outputTokens: 900 });
    expect(feb.costUsd).toBeCloseTo(costUsd(model, both) - costUsd(model, firstCall), 6);
    // the whole turn is what AssistantReplied recorded, neither more nor less
    const all = await usage.ofOwner(owner, {});
    expect(all).toMatchObject({ turns: 1, toolCalls: 1, inputTokens: both.inputTokens, costUsd: costUsd(model, both) });
  });

  it("bills a fork's copied history to no one: the reader's total and the fork's own usage stay what was paid", async () => {
    const owner = `reader-${randomUUID()}`;
    const source = await twoCallTurn(owner);
    const projection = new ConversationsProjection();
    await projection.applyBatch(source.events, db.pool);
    const paid = await usage.ofOwner(owner, {});
    expect(paid.costUsd).toBe(costUsd(model, both));

    const forkId = randomUUID();
    const copies = withIds(
      forkEvents(
        { conversationId: source.id, history: source.events as StoredEvent<ConversationEvent>[] },
        source.events.length,
        { userId: owner },
      ),
    );
    const fork = await givenConversation(store, forkId, copies);
    await projection.applyBatch(fork.events, db.pool);

    expect(await usage.ofOwner(owner, {})).toEqual(paid);
    expect(await usage.ofConversation(owner, forkId)).toMatchObject({ turns: 0, toolCalls: 0, costUsd: 0 });
    const lines = await db.pool.query('SELECT count(*)::int AS n FROM usage_records WHERE conversation_id = $1', [
      forkId,
    ]);
    expect(lines.rows[0].n).toBe(0);
  });

  it('prices a line recorded before calls carried their price at list price, as before', async () => {
    // a ToolInvoked written by the release before: usage and model, no costUsd
    const owner = `reader-${randomUUID()}`;
    const turnId = randomUUID();
    const id = randomUUID();
    const { events } = await givenConversation(store, id, [
      conversationStarted({ ownerId: owner }),
      userMessagePosted({ content: 'q', turnId }),
      toolInvoked({ turnId, name: 'search_book', usage: firstCall, model }),
    ]);
    await new ConversationsProjection().applyBatch(events, db.pool);
    expect(await usage.ofOwner(owner, {})).toMatchObject({ toolCalls: 1, costUsd: costUsd(model, firstCall) });
  });

  it("keys an erased reader's lines by HMAC-SHA-256 of their id under the database's own ledger key", async () => {
    const { rows } = await db.pool.query<{ key: Buffer; pseudonym: string }>(
      `SELECT key, ledger_pseudonym('alice@example.org') AS pseudonym FROM ledger_key`,
    );
    expect(rows[0].key).toHaveLength(32);
    expect(rows[0].pseudonym).toBe(createHmac('sha256', rows[0].key).update('alice@example.org').digest('hex'));
  });
});
