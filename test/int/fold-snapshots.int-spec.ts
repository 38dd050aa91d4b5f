import { randomUUID } from 'node:crypto';
import { conversationStreamId } from '@parley/conversation';
import { EventStore, FoldSnapshots, NewEvent, StoredEvent, StreamFoldCache } from '@parley/event-store';
import { conversationTurnsFold } from '../../apps/worker/src/turns/conversation-folds';
import {
  assistantReplied,
  conversationStarted,
  givenConversation,
  toolInvoked,
  toolResultRecorded,
  userMessagePosted,
} from '../support/factories/events';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const counted = (n: number): NewEvent => ({ id: randomUUID(), type: 'Counted', data: { n } });

type Tally = { sum: number; last: Date | null; seen: Map<number, number> };

/** A fold whose state has a Date and a Map, snapshotted every 5 events. */
const tallyFold = (id = 'tally/v1') => ({
  applied: 0,
  snapshots: { id, every: 5 },
  initial: (): Tally => ({ sum: 0, last: null, seen: new Map() }),
  evolve(this: { applied: number }, s: Tally, e: StoredEvent): Tally {
    this.applied++;
    const n = (e.data as { n: number }).n;
    return { sum: s.sum + n, last: e.occurredAt, seen: new Map(s.seen).set(n, (s.seen.get(n) ?? 0) + 1) };
  },
});

/** Until the snapshot saved without waiting is in the table. */
async function snapshotAt(snapshots: FoldSnapshots, stream: string, fold: string, version: number) {
  for (let i = 0; i < 100; i++) {
    if ((await snapshots.latest(stream, fold))?.version === version) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no snapshot of ${stream} at ${version}`);
}

describe('StreamFoldCache with snapshots (fold_snapshots)', () => {
  let db: TestDatabase;
  let store: EventStore;
  let snapshots: FoldSnapshots;
  let readsAfter: Array<{ after: number; limit?: number }>;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
    snapshots = new FoldSnapshots(db.pool);
    const readStream = store.readStream.bind(store);
    store.readStream = ((streamId: string, opts?: { after?: number; limit?: number }) => {
      readsAfter.push({ after: opts?.after ?? 0, ...(opts?.limit ? { limit: opts.limit } : {}) });
      return readStream(streamId, opts);
    }) as typeof store.readStream;
  });
  beforeEach(() => (readsAfter = []));
  afterAll(() => db.drop());

  it('takes a snapshot once a span has passed, and a new process folds only the events after it', async () => {
    const stream = `tally-${randomUUID()}`;
    await store.append(stream, [1, 2, 3, 4, 5, 6, 7].map(counted), { expectedVersion: 'no_stream' });
    const first = new StreamFoldCache(store, tallyFold(), 256, snapshots);
    const before = await first.load(stream);
    await snapshotAt(snapshots, stream, 'tally/v1', 7);
    await store.append(stream, [8, 1].map(counted), { expectedVersion: 7 });

    // a new process (a deploy): the first span tells it the stream is long, then snapshot + the rest
    const fold = tallyFold();
    readsAfter = [];
    const later = await new StreamFoldCache(store, fold, 256, snapshots).load(stream);
    expect(readsAfter).toEqual([{ after: 0, limit: 5 }, { after: 7 }]);
    expect(fold.applied).toBe(2);
    // the same state as folding the whole log
    const whole = await new StreamFoldCache(store, tallyFold()).load(stream);
    expect(later).toEqual(whole);
    expect(later.state.sum).toBe(before.state.sum + 9);
    expect(later.state.last).toBeInstanceOf(Date);
    expect(later.state.seen.get(1)).toBe(2);
  });

  it('folds a short stream from the log in one read, without looking for a snapshot', async () => {
    const stream = `short-${randomUUID()}`;
    await store.append(stream, [1, 2, 3].map(counted), { expectedVersion: 'no_stream' });
    const fold = tallyFold();
    expect((await new StreamFoldCache(store, fold, 256, snapshots).load(stream)).state.sum).toBe(6);
    expect(readsAfter).toEqual([{ after: 0, limit: 5 }]);
    expect(await snapshots.latest(stream, 'tally/v1')).toBeUndefined();
  });

  it('reads no snapshot of another fold version, nor one it cannot decode: it folds the log', async () => {
    const stream = `versions-${randomUUID()}`;
    await store.append(stream, [1, 2, 3, 4, 5, 6].map(counted), { expectedVersion: 'no_stream' });
    await new StreamFoldCache(store, tallyFold('tally/v1'), 256, snapshots).load(stream);
    await snapshotAt(snapshots, stream, 'tally/v1', 6);

    const changed = tallyFold('tally/v2');
    expect((await new StreamFoldCache(store, changed, 256, snapshots).load(stream)).state.sum).toBe(21);
    expect(changed.applied).toBe(6);

    await db.pool.query(`UPDATE fold_snapshots SET state_json = '{not json' WHERE stream_id = $1`, [stream]);
    const again = tallyFold('tally/v1');
    expect((await new StreamFoldCache(store, again, 256, snapshots).load(stream)).state.sum).toBe(21);
    expect(again.applied).toBe(6);
  });

  it('keeps the later snapshot when an earlier one is saved after it', async () => {
    const stream = `order-${randomUUID()}`;
    await snapshots.save(stream, 'tally/v1', { version: 10, stateJson: '{"sum":10}' });
    await snapshots.save(stream, 'tally/v1', { version: 5, stateJson: '{"sum":5}' });
    expect(await snapshots.latest(stream, 'tally/v1')).toEqual({ version: 10, stateJson: '{"sum":10}' });
  });

  it('gives a worker the same conversation from a snapshot as from the whole log: turns, tool results, an open turn', async () => {
    const conversationId = randomUUID();
    const events: NewEvent[] = [conversationStarted({ ownerId: 'reader-1', title: 'Snapshots' })];
    for (let t = 0; t < 6; t++) {
      const turnId = randomUUID();
      const call = toolInvoked({ turnId, name: 'search_book', input: { query: `lamp ${t}` } });
      events.push(
        userMessagePosted({ turnId, content: `Question ${t}?` }),
        call,
        toolResultRecorded({ turnId, toolUseId: call.data.toolUseId, content: `passage ${t}` }),
        ...(t < 5 ? [assistantReplied({ turnId, content: `Answer ${t}.` })] : []), // the last turn is still open
      );
    }
    await givenConversation(store, conversationId, events as never);
    const stream = conversationStreamId(conversationId);
    const fold = conversationTurnsFold(false, 8);
    await new StreamFoldCache(store, fold, 256, snapshots).load(stream);
    await snapshotAt(snapshots, stream, fold.snapshots!.id, events.length);

    const fromSnapshot = await new StreamFoldCache(store, conversationTurnsFold(false, 8), 256, snapshots).load(stream);
    const fromLog = await new StreamFoldCache(store, conversationTurnsFold(false, 8)).load(stream);
    expect(fromSnapshot).toEqual(fromLog);
    const open = fromSnapshot.state.turns[fromSnapshot.state.turns.length - 1];
    expect(open.postedAt).toBeInstanceOf(Date);
    expect(open.iterations[0].results).toBeInstanceOf(Map);
    expect(open.iterations[0].results.size).toBe(1);
  });
});
