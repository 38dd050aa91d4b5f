import { randomUUID } from 'node:crypto';
import { conversationStreamId } from '@parley/conversation';
import { AppendNotifier, EventStore } from '@parley/event-store';
import { ConversationFolds } from '../../apps/worker/src/turns/conversation-folds';
import { countingPool } from '../support/counting-pool';
import { conversationStarted, userMessagePosted } from '../support/factories/events';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { waitFor } from '../support/wait-for';

/**
 * The worker's kept conversations, kept up by the announcements of appends made anywhere: a
 * turn's job finds its question already folded in and starts without reading the log, unless
 * something since its last read went unheard or a turn ahead of it is still open as kept.
 */
describe(ConversationFolds.name, () => {
  let db: TestDatabase;
  let store: EventStore;
  let notifier: AppendNotifier;
  let folds: ConversationFolds;
  let statements: string[];

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
    const counting = countingPool(db.pool);
    statements = counting.statements;
    notifier = new AppendNotifier(db.url);
    folds = new ConversationFolds(
      new EventStore(counting.pool),
      { llm: { retrievalMode: 'auto' } } as ConstructorParameters<typeof ConversationFolds>[1],
      { everyModelTakesTools: true },
      notifier,
    );
    await notifier.start();
  });
  afterAll(async () => {
    folds.onModuleDestroy();
    await notifier.stop();
    await db.drop();
  });

  const reads = () => statements.filter((s) => s.includes('FROM events')).length;

  /** A conversation this worker has read, then a question posted by another process. */
  async function questionPosted(content = 'Who is the Cheshire Cat?', turnsBefore = 0) {
    const id = randomUUID();
    const streamId = conversationStreamId(id);
    await store.append(streamId, [conversationStarted({ ownerId: 'alice' })], { expectedVersion: 'no_stream' });
    await folds.load(id);
    let version = 1;
    for (let i = 0; i < turnsBefore; i++)
      await store.append(streamId, [userMessagePosted({ content: `earlier ${i}` })], { expectedVersion: version++ });
    const turnId = randomUUID();
    await store.append(streamId, [userMessagePosted({ content, turnId })], { expectedVersion: version++ });
    return { id, turnId, version };
  }

  it('starts a turn whose question it heard from what it keeps, without a read', async () => {
    const { id, turnId, version } = await questionPosted();
    await waitFor('the question to be heard', async () => folds.kept(id)?.version === version, 5_000);
    const before = reads();
    folds.readAhead(id, turnId);
    const folded = await folds.latest(id);
    expect(reads()).toBe(before);
    expect(folded.turns.map((t) => t.turnId)).toEqual([turnId]);
  });

  it('reads when the question was announced without its events (too long for a notification)', async () => {
    const { id, turnId, version } = await questionPosted('Why? '.repeat(2_000));
    await new Promise((r) => setTimeout(r, 200)); // heard, and nothing folded in
    expect(folds.kept(id)?.version).toBe(1);
    const before = reads();
    folds.readAhead(id, turnId);
    const folded = await folds.latest(id);
    expect(reads()).toBe(before + 1);
    expect(folded).toMatchObject({ version });
  });

  it('reads when a turn ahead of it is still open as kept (its ending may not have been heard yet)', async () => {
    const { id, turnId, version } = await questionPosted('And then?', 1);
    await waitFor('the question to be heard', async () => folds.kept(id)?.version === version, 5_000);
    const before = reads();
    folds.readAhead(id, turnId);
    await folds.latest(id);
    expect(reads()).toBe(before + 1);
  });
});
