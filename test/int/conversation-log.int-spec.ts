import { randomUUID } from 'node:crypto';
import { ConversationEvent, conversationStreamId } from '@parley/conversation';
import { ConsumerStats, EventStore, NewEvent } from '@parley/event-store';
import { ConversationLogQueries } from '@parley/read-models';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/** The repositories that read the log for the API, the sweeper and the metrics. */
describe(ConversationLogQueries.name, () => {
  let db: TestDatabase;
  let store: EventStore;
  let sut: ConversationLogQueries;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
    sut = new ConversationLogQueries(db.pool);
  });
  afterAll(() => db.drop());

  const conversation = async (ownerId: string, bookId: string | null, ...rest: ConversationEvent[]) => {
    const id = randomUUID();
    const start: ConversationEvent = {
      type: 'ConversationStarted',
      data: { ownerId, bookId, title: null, readingPosition: null },
    };
    const events: NewEvent<ConversationEvent>[] = [start, ...rest].map((e) => ({
      ...e,
      id: randomUUID(),
      metadata: { userId: ownerId },
    }));
    const { events: stored } = await store.append(conversationStreamId(id), events, { expectedVersion: 'no_stream' });
    return { id, stored };
  };
  const post = (turnId: string): ConversationEvent => ({
    type: 'UserMessagePosted',
    data: { messageId: randomUUID(), turnId, content: 'hello' },
  });

  it("finds the user's conversations that ever had a book, by any route, and no one else's", async () => {
    const book = randomUUID();
    const other = randomUUID();
    const a = await conversation('ann', book);
    const b = await conversation('ann', book, { type: 'ConversationDeleted', data: {} });
    const sources = (...bookIds: string[]): ConversationEvent => ({
      type: 'SourcesChanged',
      data: { bookIds, books: bookIds.map((id) => ({ id, title: 't' })) },
    });
    const added = await conversation('ann', other, sources(other, book), sources(other));
    await conversation('ann', randomUUID());
    await conversation('ben', book);
    const both = randomUUID();
    const start: NewEvent<ConversationEvent> = {
      id: randomUUID(),
      type: 'ConversationStarted',
      data: { ownerId: 'ann', bookId: other, bookIds: [other, book], title: null, readingPosition: null },
    };
    await store.append(conversationStreamId(both), [start], { expectedVersion: 'no_stream' });
    expect((await sut.conversationsAbout('ann', book)).sort()).toEqual([a.id, b.id, added.id, both].sort());
    expect((await sut.conversationsAbout('ann', other)).sort()).toEqual([added.id, both].sort());
    expect((await sut.conversationsOf('ben')).length).toBe(1);
    expect(await sut.deletedNotErased(1000)).toContain(b.id);
  });

  it("finds a post by its event id, only in the user's own conversation", async () => {
    const turnId = randomUUID();
    const { id, stored } = await conversation('cat', null, post(turnId));
    const posted = stored[1];
    expect(await sut.findPost('cat', id, posted.id)).toEqual({
      data: posted.data,
      version: 2,
      position: posted.position,
    });
    expect(await sut.findPost('dan', id, posted.id)).toBeUndefined();
    expect(await sut.findPost('cat', randomUUID(), posted.id)).toBeUndefined();
  });

  it('lists the turns without an ending in conversations not deleted, in log order', async () => {
    const [open1, open2, ended, inDeleted] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const a = await conversation('eve', null, post(open1), post(ended), {
      type: 'TurnCancelled',
      data: { turnId: ended },
    });
    const b = await conversation('eve', null, post(open2));
    await conversation('eve', null, post(inDeleted), { type: 'ConversationDeleted', data: {} });
    const unended = await sut.unendedTurns('1 hour');
    expect(unended).toEqual(
      expect.arrayContaining([
        { conversationId: a.id, turnId: open1 },
        { conversationId: b.id, turnId: open2 },
      ]),
    );
    expect(unended.map((t) => t.turnId)).not.toContain(ended);
    expect(unended.map((t) => t.turnId)).not.toContain(inDeleted);
    expect(unended.findIndex((t) => t.turnId === open1)).toBeLessThan(unended.findIndex((t) => t.turnId === open2));
  });
});

describe(ConsumerStats.name, () => {
  let db: TestDatabase;

  beforeAll(async () => (db = await createTestDatabase()));
  afterAll(() => db.drop());

  it("reports each consumer's lag behind the head and its dead letters", async () => {
    const store = new EventStore(db.pool);
    const { events } = await store.append(
      `s-${randomUUID()}`,
      [1, 2, 3].map(() => ({ id: randomUUID(), type: 'Something', data: {} })),
      { expectedVersion: 'no_stream' },
    );
    const head = Number(events[2].position);
    await db.pool.query(
      `INSERT INTO consumer_checkpoints (consumer, transaction_id, position) VALUES ('slow', $1::xid8, $2)`,
      [events[0].transactionId, events[0].position],
    );
    await db.pool.query(
      `INSERT INTO consumer_dead_letters (consumer, event_id, position, attempts, error) VALUES ('slow', $1, $2, 5, 'boom')`,
      [events[1].id, events[1].position],
    );
    const sut = new ConsumerStats(db.pool);
    expect(await sut.lag()).toEqual([{ consumer: 'slow', lag: head - Number(events[0].position) }]);
    expect(await sut.deadLetters()).toEqual([{ consumer: 'slow', count: 1 }]);
  });
});
