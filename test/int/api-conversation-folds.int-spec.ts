import { randomUUID } from 'node:crypto';
import { ConversationEvent, conversationStreamId } from '@parley/conversation';
import { AppendNotifier, EventStore, FoldSnapshots, StoredEvent } from '@parley/event-store';
import { ApiConversationFolds } from '../../apps/api/src/conversations/api-conversation-folds';
import { conversationRenamed, conversationStarted, userMessagePosted } from '../support/factories/events';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { waitFor } from '../support/wait-for';

/** The API's kept conversations, kept up by the announcements of appends made anywhere. */
describe(ApiConversationFolds.name, () => {
  let db: TestDatabase;
  let store: EventStore;
  let notifier: AppendNotifier;
  let folds: ApiConversationFolds;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
    notifier = new AppendNotifier(db.url);
    folds = new ApiConversationFolds(store, new FoldSnapshots(db.pool));
    notifier.on('append', folds.heard);
    await notifier.start(); // listening once it resolves: something listens for appends
  });
  afterAll(async () => {
    notifier.off('append', folds.heard);
    await notifier.stop();
    await db.drop();
  });

  async function started(): Promise<string> {
    const id = randomUUID();
    await store.append(conversationStreamId(id), [conversationStarted({ ownerId: 'alice' })], {
      expectedVersion: 'no_stream',
    });
    return id;
  }

  it('keeps nothing it has not read', async () => {
    expect(folds.kept(await started())).toBeUndefined();
  });

  it('folds in the events an announcement brings, to the state a read gives', async () => {
    const id = await started();
    await folds.load(id);
    const streamId = conversationStreamId(id);
    await store.append(streamId, [userMessagePosted({ content: 'Who is the Cheshire Cat?' })], { expectedVersion: 1 });
    await store.append(streamId, [conversationRenamed('one')], { expectedVersion: 2 });
    await waitFor('the renaming to be heard', async () => folds.kept(id)?.version === 3, 5_000);
    expect(folds.kept(id)).toEqual(await new ApiConversationFolds(store, new FoldSnapshots(db.pool)).load(id));
    expect(folds.kept(id)?.state.title).toBe('one');
  });

  /** A title too long for a notification: its renaming is announced without its events. */
  const longTitle = (title: string) => title + ' …'.repeat(4_000);

  it('reads a kept conversation again when an append was announced without its events (too long)', async () => {
    const id = await started();
    await folds.load(id);
    await store.append(conversationStreamId(id), [conversationRenamed(longTitle('one'))], { expectedVersion: 1 });
    await waitFor('the append to be heard', async () => folds.kept(id) === undefined, 5_000);
    expect(await folds.load(id)).toMatchObject({ version: 2, state: { title: longTitle('one') } });
    expect(folds.kept(id)).toMatchObject({ version: 2 });
  });

  it('does not trust a kept conversation an announcement left behind, until it is read again', async () => {
    const id = await started();
    await folds.load(id);
    // inside a caller's transaction: announced by its stream alone
    await store.withTransaction((tx) => store.appendIn(tx, conversationStreamId(id), [conversationRenamed('t')], 1));
    await waitFor('the append to be heard', async () => folds.kept(id) === undefined, 5_000);
    await store.append(conversationStreamId(id), [conversationRenamed('u')], { expectedVersion: 2 });
    await new Promise((r) => setTimeout(r, 200));
    expect(folds.kept(id)).toBeUndefined(); // what came next does not follow what it kept
    await folds.load(id);
    expect(folds.kept(id)).toMatchObject({ version: 3, state: { title: 'u' } });
  });

  it('keeps its own appends, whether their announcement comes before or after the append returns', async () => {
    const id = await started();
    await folds.load(id);
    // announced without events, so the announcement alone cannot bring the fold up to date
    const rename = (title: string, at: number) =>
      store
        .append(conversationStreamId(id), [conversationRenamed(longTitle(title))], { expectedVersion: at })
        .then((r) => r.events as StoredEvent<ConversationEvent>[]);
    // the announcement first, the append's answer after
    const first = await rename('first', 1);
    await waitFor('the announcement to be heard', async () => folds.kept(id) === undefined, 5_000); // heard of version 2, kept 1
    folds.appended(id, first);
    expect(folds.kept(id)).toMatchObject({ version: 2, state: { title: longTitle('first') } });
    // the append's answer first (as the API folds it in, right when the append returns), the announcement after
    folds.appended(id, await rename('second', 2));
    expect(folds.kept(id)).toMatchObject({ version: 3, state: { title: longTitle('second') } });
    await new Promise((r) => setTimeout(r, 200));
    expect(folds.kept(id)).toMatchObject({ version: 3, state: { title: longTitle('second') } });
  });
});
