import { randomUUID } from 'node:crypto';
import { Announcement, AppendNotifier, EventStore } from '@parley/event-store';
import { newEvent } from '../support/factories/new-event';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { waitFor } from '../support/wait-for';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(AppendNotifier.name, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  /** A started notifier, and the last announcement it heard of each stream. */
  async function listening() {
    const notifier = new AppendNotifier(db.url);
    const heard = new Map<string, Announcement>();
    notifier.on('append', (a: Announcement) => heard.set(a.streamId, a));
    await notifier.start();
    return { notifier, heard };
  }

  it('hears of every stream a burst of appends wrote to, and of a caller-transaction append only once it commits', async () => {
    const { notifier, heard } = await listening();
    try {
      const store = new EventStore(db.pool);
      const streams = Array.from({ length: 30 }, () => `burst-${randomUUID()}`);
      await Promise.all(streams.map((s) => store.append(s, [newEvent()], { expectedVersion: 'no_stream' })));
      await waitFor('every appended stream to be announced', async () => streams.every((s) => heard.has(s)), 5_000);
      // side by side, they go out several to a statement, and each stream is announced with the events it stored
      for (const s of streams) expect(heard.get(s)!.events).toEqual(await store.readStream(s));

      const rolledBack = `rolled-back-${randomUUID()}`;
      await store
        .withTransaction(async (tx) => {
          await store.appendIn(tx, rolledBack, [newEvent()], 'no_stream');
          throw new Error('the caller gives up');
        })
        .catch(() => undefined);
      const committed = `committed-${randomUUID()}`;
      await store.withTransaction((tx) => store.appendIn(tx, committed, [newEvent()], 'no_stream'));
      await waitFor('the committed append to be announced', async () => heard.has(committed), 5_000);
      expect(heard.has(rolledBack)).toBe(false);
    } finally {
      await notifier.stop();
    }
  });

  it('announces an append with its events exactly as a read returns them, and a long one without them, even beside a short one', async () => {
    const { notifier, heard } = await listening();
    try {
      const store = new EventStore(db.pool);
      const short = `short-${randomUUID()}`;
      await store.append(short, [newEvent('Started', { title: 'é ✓' })], { expectedVersion: 'no_stream' });
      await store.append(
        short,
        [
          { ...newEvent('Renamed', { title: 'two', nested: { at: [1, 2.5, null] } }), metadata: { traceparent: 'x' } },
          newEvent('Renamed', { title: 'three' }),
        ],
        { expectedVersion: 1 },
      );
      await waitFor('the second append to be announced', async () => heard.get(short)?.events?.length === 2, 5_000);
      expect(heard.get(short)!.events).toEqual(await store.readStream(short, { after: 1 }));

      const long = `long-${randomUUID()}`;
      const beside = `beside-${randomUUID()}`;
      await Promise.all([
        store.append(long, [newEvent('Started', { text: 'x'.repeat(8_000) })], { expectedVersion: 'no_stream' }),
        store.append(beside, [newEvent('Started')], { expectedVersion: 'no_stream' }),
      ]);
      await waitFor('both appends to be announced', async () => heard.has(long) && heard.has(beside), 5_000);
      expect(heard.get(long)!.version).toBe(1);
      expect(heard.get(long)!.events).toBeUndefined();
      expect(heard.get(beside)!.events).toEqual(await store.readStream(beside));
    } finally {
      await notifier.stop();
    }
  });

  /** A notifier whose connection is named, and how many connections of that name the server has. */
  function named() {
    const app = `notifier-${randomUUID().slice(0, 8)}`;
    const url = new URL(db.url);
    url.searchParams.set('application_name', app);
    const connections = async () =>
      Number(
        (await db.pool.query('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [app])).rows[0]
          .n,
      );
    return { url: url.toString(), connections };
  }

  it('holds its LISTEN connection only while something listens for appends', async () => {
    const { url, connections } = named();
    const notifier = new AppendNotifier(url);
    let reconnected = 0;
    notifier.on('reconnected', () => reconnected++);
    try {
      await notifier.start();
      await sleep(200);
      expect(await connections()).toBe(0); // started, but nothing hears appends

      const heard: Announcement[] = [];
      const hear = (a: Announcement) => heard.push(a);
      notifier.on('append', hear);
      await waitFor('the LISTEN connection', async () => notifier.connected && (await connections()) === 1, 5_000);
      expect(reconnected).toBe(1); // readers catch up with what was appended before it listened
      const stream = `heard-${randomUUID()}`;
      await new EventStore(db.pool).append(stream, [newEvent()], { expectedVersion: 'no_stream' });
      await waitFor('the append to be heard', async () => heard.some((a) => a.streamId === stream), 5_000);

      notifier.off('append', hear);
      await waitFor('the connection to close', async () => (await connections()) === 0, 5_000);
      expect(notifier.connected).toBe(false);
      notifier.on('append', hear);
      await waitFor('it to listen again', async () => notifier.connected && (await connections()) === 1, 5_000);
      expect(reconnected).toBe(2);
    } finally {
      await notifier.stop();
    }
    await waitFor('no connection after stop', async () => (await connections()) === 0, 5_000);
  });

  it('leaves no connection behind when stopped while it is still connecting', async () => {
    const { url, connections } = named();
    for (let i = 0; i < 5; i++) {
      const notifier = new AppendNotifier(url);
      notifier.on('append', () => undefined);
      const starting = notifier.start();
      await notifier.stop();
      await starting;
    }
    await sleep(300);
    expect(await connections()).toBe(0);
  });
});
