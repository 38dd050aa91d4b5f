import { randomUUID } from 'node:crypto';
import { EventStore, NewEvent, StoredEvent, StreamFoldCache } from '@parley/event-store';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const counted = (n: number): NewEvent => ({ id: randomUUID(), type: 'Counted', data: { n } });

/** The fold under test: the sum of the stream's n, and how many events it was given in all. */
const sumFold = {
  applied: 0,
  initial: () => ({ sum: 0 }),
  evolve(state: { sum: number }, e: StoredEvent) {
    sumFold.applied++;
    return { sum: state.sum + (e.data as { n: number }).n };
  },
};

describe(StreamFoldCache.name, () => {
  let db: TestDatabase;
  let store: EventStore;
  let readsAfter: number[];

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
    const readStream = store.readStream.bind(store);
    store.readStream = ((streamId: string, opts?: { after?: number }) => {
      readsAfter.push(opts?.after ?? 0);
      return readStream(streamId, opts);
    }) as typeof store.readStream;
  });
  beforeEach(() => {
    readsAfter = [];
    sumFold.applied = 0;
  });
  afterAll(() => db.drop());

  it('reads and folds only the events appended since its last load, and gives the state of the whole stream', async () => {
    const sut = new StreamFoldCache(store, sumFold);
    const stream = `sum-${randomUUID()}`;
    await store.append(stream, [counted(1), counted(2), counted(3)], { expectedVersion: 'no_stream' });
    expect(await sut.load(stream)).toEqual({ version: 3, state: { sum: 6 } });
    await store.append(stream, [counted(10)], { expectedVersion: 3 });
    expect(await sut.load(stream)).toEqual({ version: 4, state: { sum: 16 } });
    expect(await sut.load(stream)).toEqual({ version: 4, state: { sum: 16 } });
    expect(readsAfter).toEqual([0, 3, 4]);
    expect(sumFold.applied).toBe(4); // each event folded once

    // another process appends meanwhile: the next load of this one sees it from the log
    await new EventStore(db.pool).append(stream, [counted(100)], { expectedVersion: 4 });
    expect((await sut.load(stream)).state).toEqual({ sum: 116 });
  });

  it('folds a stream anew after an event that says its earlier events read otherwise now', async () => {
    // (a withdrawn book: its passages, joined into earlier events when they are read, are gone)
    const sut = new StreamFoldCache(store, { ...sumFold, foldsAnewAfter: (e: StoredEvent) => e.type === 'Withdrawn' });
    const stream = `withdrawn-${randomUUID()}`;
    await store.append(stream, [counted(1), counted(2)], { expectedVersion: 'no_stream' });
    expect((await sut.load(stream)).state).toEqual({ sum: 3 });
    const told = { id: randomUUID(), type: 'Withdrawn', data: { n: 0 } };
    const { events: own } = await store.append(stream, [told], { expectedVersion: 2 });
    // its own append of it is not folded in from memory
    expect(sut.appended(stream, own)).toBeUndefined();
    readsAfter = [];
    expect(await sut.load(stream)).toEqual({ version: 3, state: { sum: 3 } });
    expect(readsAfter).toEqual([0]); // read from the start, not from the version it kept
  });

  it("folds in its own process's append without reading, and declines when its fold is not at the version before", async () => {
    const sut = new StreamFoldCache(store, sumFold);
    const stream = `own-${randomUUID()}`;
    await store.append(stream, [counted(1)], { expectedVersion: 'no_stream' });
    await sut.load(stream);
    readsAfter = [];
    const own = await store.append(stream, [counted(2), counted(3)], { expectedVersion: 1 });
    expect(sut.appended(stream, own.events)).toEqual({ version: 3, state: { sum: 6 } });
    expect(readsAfter).toEqual([]);
    expect(await sut.load(stream)).toEqual({ version: 3, state: { sum: 6 } }); // and it is what it keeps

    // someone else appended in between: the fold is not at the version before these, so no state from memory
    await new EventStore(db.pool).append(stream, [counted(100)], { expectedVersion: 3 });
    const later = await store.append(stream, [counted(1000)], { expectedVersion: 4 });
    expect(sut.appended(stream, later.events)).toBeUndefined();
    expect((await sut.load(stream)).state).toEqual({ sum: 1106 });
    expect(sut.appended(`never-loaded-${randomUUID()}`, later.events)).toBeUndefined();
  });

  it('keeps the later of two loads that finish out of order', async () => {
    const stream = `race-${randomUUID()}`;
    await store.append(stream, [counted(1)], { expectedVersion: 'no_stream' });
    // the first load's read is held back until the second load has finished
    let releaseFirst!: () => void;
    const firstMayFinish = new Promise<void>((r) => (releaseFirst = r));
    let reads = 0;
    const gated = Object.create(store) as EventStore;
    gated.readStream = (async (id: string, opts?: { after?: number }) => {
      const events = await store.readStream(id, opts);
      if (reads++ === 0) await firstMayFinish;
      return events;
    }) as typeof store.readStream;
    const sut = new StreamFoldCache(gated, sumFold);

    const slow = sut.load(stream); // reads version 1
    await new Promise((r) => setTimeout(r, 50));
    await store.append(stream, [counted(2)], { expectedVersion: 1 });
    expect(await sut.load(stream)).toEqual({ version: 2, state: { sum: 3 } });
    releaseFirst();
    expect(await slow).toEqual({ version: 1, state: { sum: 1 } });
    readsAfter = [];
    expect(await sut.load(stream)).toEqual({ version: 2, state: { sum: 3 } });
    expect(readsAfter).toEqual([2]); // the later fold was kept, not the one that finished last
  });

  it('answers `latest` from the read under way or the fold kept, and reads when that latest read failed', async () => {
    const stream = `latest-${randomUUID()}`;
    await store.append(stream, [counted(1)], { expectedVersion: 'no_stream' });
    // reads held until released, or failed, one by one
    const held: Array<{ release: () => void; fail: () => void }> = [];
    const gated = Object.create(store) as EventStore;
    gated.readStream = (async (id: string, opts?: { after?: number }) => {
      await new Promise<void>((release, fail) => held.push({ release, fail: () => fail(new Error('db away')) }));
      return store.readStream(id, opts);
    }) as typeof store.readStream;
    const sut = new StreamFoldCache(gated, sumFold);
    const flush = () => new Promise((r) => setTimeout(r, 20));

    // a read ahead is under way: `latest` waits for it, and reads nothing of its own
    const ahead = sut.load(stream);
    await store.append(stream, [counted(2)], { expectedVersion: 1 });
    const latest = sut.latest(stream);
    await flush();
    expect(held).toHaveLength(1);
    held.shift()!.release();
    expect(await ahead).toEqual({ version: 2, state: { sum: 3 } });
    expect(await latest).toEqual({ version: 2, state: { sum: 3 } });

    // its own append, then `latest`: from memory, no read
    const own = await store.append(stream, [counted(4)], { expectedVersion: 2 });
    sut.appended(stream, own.events);
    expect(await sut.latest(stream)).toEqual({ version: 3, state: { sum: 7 } });
    expect(held).toHaveLength(0);

    // the latest read failed: what is kept may be older than it, so `latest` reads the log
    await new EventStore(db.pool).append(stream, [counted(8)], { expectedVersion: 3 });
    const failing = sut.load(stream);
    await flush();
    held.shift()!.fail();
    await expect(failing).rejects.toThrow('db away');
    const reread = sut.latest(stream);
    await flush();
    expect(held).toHaveLength(1);
    held.shift()!.release();
    expect(await reread).toEqual({ version: 4, state: { sum: 15 } });
  });

  it('forgets the least recently loaded streams past its size', async () => {
    const sut = new StreamFoldCache(store, sumFold, 2);
    const [a, b, c] = [`a-${randomUUID()}`, `b-${randomUUID()}`, `c-${randomUUID()}`];
    for (const s of [a, b, c]) await store.append(s, [counted(1)], { expectedVersion: 'no_stream' });
    await sut.load(a);
    await sut.load(b);
    await sut.load(a); // a is now the most recent
    await sut.load(c); // b goes
    expect(sut.size).toBe(2);
    readsAfter = [];
    await sut.load(a);
    await sut.load(b);
    expect(readsAfter).toEqual([1, 0]); // a was kept, b read again from the start
  });

  it('keeps the state as its fold compacts it, and folds later events onto that', async () => {
    // keeps the sum and only the last two numbers: what a decision may still need
    const lastTwo = {
      initial: () => ({ sum: 0, recent: [] as number[] }),
      evolve: (s: { sum: number; recent: number[] }, e: StoredEvent) => {
        const n = (e.data as { n: number }).n;
        return { sum: s.sum + n, recent: [...s.recent, n] };
      },
      compact: (s: { sum: number; recent: number[] }) => ({ ...s, recent: s.recent.slice(-2) }),
    };
    const sut = new StreamFoldCache(store, lastTwo);
    const stream = `compact-${randomUUID()}`;
    await store.append(stream, [counted(1), counted(2), counted(3)], { expectedVersion: 'no_stream' });
    expect((await sut.load(stream)).state).toEqual({ sum: 6, recent: [2, 3] });
    await store.append(stream, [counted(4)], { expectedVersion: 3 });
    expect((await sut.load(stream)).state).toEqual({ sum: 10, recent: [3, 4] });
  });
});
