import { randomUUID } from 'node:crypto';
import { conversationStreamId } from '@parley/conversation';
import { AppendNotifier, EventStore } from '@parley/event-store';
import { ConversationFolds } from '../../apps/worker/src/turns/conversation-folds';
import { conversationStarted, userMessagePosted } from '../support/factories/events';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { waitFor } from '../support/wait-for';

/**
 * The worker's kept conversations take in what other processes' appends announce, so a turn's
 * next event is decided on the question posted meanwhile (handleCommand decides on the newer of
 * the planned and the kept fold) instead of losing the race to it and reading it back.
 */
describe(ConversationFolds.name, () => {
  let db: TestDatabase;
  let store: EventStore;
  let notifier: AppendNotifier;
  let folds: ConversationFolds;
  const foldsOn = (n?: AppendNotifier) =>
    new ConversationFolds(
      store,
      { llm: { retrievalMode: 'auto' } } as ConstructorParameters<typeof ConversationFolds>[1],
      { everyModelTakesTools: true },
      n,
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
    notifier = new AppendNotifier(db.url);
    folds = foldsOn(notifier);
    await notifier.start();
  });
  afterAll(async () => {
    folds.onModuleDestroy();
    await notifier.stop();
    await db.drop();
  });

  /** A conversation this worker has read, then a question posted by another process. */
  async function questionPosted(content: string) {
    const id = randomUUID();
    const streamId = conversationStreamId(id);
    await store.append(streamId, [conversationStarted({ ownerId: 'alice' })], { expectedVersion: 'no_stream' });
    await folds.load(id);
    const turnId = randomUUID();
    await store.append(streamId, [userMessagePosted({ content, turnId })], { expectedVersion: 1 });
    return { id, turnId };
  }

  it('folds in a question another process posted, to the state a read gives', async () => {
    const { id, turnId } = await questionPosted('Who is the Cheshire Cat?');
    await waitFor('the question to be heard', async () => folds.kept(id)?.version === 2, 5_000);
    expect(folds.kept(id)?.turns.map((t) => t.turnId)).toEqual([turnId]);
    expect(folds.kept(id)).toEqual(await foldsOn().load(id));
  });

  it('keeps what it had when the question was announced without its events (too long for a notification)', async () => {
    const { id } = await questionPosted('Why? '.repeat(2_000));
    await new Promise((r) => setTimeout(r, 200)); // heard, and nothing folded in
    expect(folds.kept(id)?.version).toBe(1);
    expect(await folds.load(id)).toMatchObject({ version: 2 });
  });
});
