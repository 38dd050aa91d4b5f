import { randomUUID } from 'node:crypto';
import { conversationStreamId } from '@parley/conversation';
import { AppendNotifier, EventStore } from '@parley/event-store';
import { ApiConversationFolds } from '../../apps/api/src/conversations/conversation-view';
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
    await notifier.start();
    folds = new ApiConversationFolds(store);
    notifier.on('append', folds.heard);
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

  it('folds in what announcements bring, alone or side by side, to the state a read gives', async () => {
    const id = await started();
    await folds.load(id);
    const streamId = conversationStreamId(id);
    await store.append(streamId, [userMessagePosted({ content: 'Who is the Cheshire Cat?' })], { expectedVersion: 1 });
    // beside another append of this process: announced after the commits, coalesced
    const elsewhere = conversationStreamId(await started());
    await Promise.all([
      store.append(elsewhere, [conversationRenamed('elsewhere')], { expectedVersion: 1 }),
      store.append(streamId, [conversationRenamed('one')], { expectedVersion: 2 }),
    ]);
    await waitFor('the renaming to be heard', async () => folds.kept(id)?.version === 3, 5_000);
    expect(folds.kept(id)).toEqual(await new ApiConversationFolds(store).load(id));
    expect(folds.kept(id)?.state.title).toBe('one');
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
});
