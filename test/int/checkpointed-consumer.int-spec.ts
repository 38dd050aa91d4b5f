import { randomUUID } from 'node:crypto';
import { PoolClient } from 'pg';
import { AppendNotifier, CheckpointedConsumerRunner, checkpointOf, EventStore, StoredEvent } from '@parley/event-store';
import { newEvent } from '../support/factories/new-event';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { waitFor } from '../support/wait-for';

describe(CheckpointedConsumerRunner.name, () => {
  let db: TestDatabase;
  let store: EventStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
    await db.pool.query('CREATE TABLE applied (consumer text, event_id uuid, type text)');
  });
  afterAll(() => db.drop());

  const recorder = (name: string, failOn?: (e: StoredEvent) => boolean) => ({
    name,
    async handle(event: StoredEvent, tx: PoolClient) {
      if (failOn?.(event)) throw new Error(`cannot handle ${event.type}`);
      await tx.query('INSERT INTO applied VALUES ($1, $2, $3)', [name, event.id, event.type]);
    },
  });
  const appliedBy = async (name: string) =>
    (
      await db.pool.query<{ event_id: string; type: string }>(
        'SELECT event_id, type FROM applied WHERE consumer = $1',
        [name],
      )
    ).rows;

  const storedCount = async () => Number((await db.pool.query('SELECT count(*) AS n FROM events')).rows[0].n);
  /** Drains until the runner has caught up with every stored event (tailing may lag, never skip). */
  async function drainAll(
    runner: CheckpointedConsumerRunner,
    applied: () => Promise<number>,
    missing = 0,
  ): Promise<void> {
    const total = await storedCount();
    try {
      await waitFor(
        'the consumer to catch up',
        async () => (await runner.drain(), (await applied()) + missing >= total),
        20_000,
      );
    } catch (e) {
      throw new Error(
        `${(e as Error).message}: ${await applied()} of ${total - missing} applied; ${await olderWriters()}`,
      );
    }
  }

  /** Open transactions that hold the log's horizon back, cluster-wide (other suites' too). */
  async function olderWriters(): Promise<string> {
    const { rows } = await db.pool.query(
      `SELECT datname, state, now() - xact_start AS open_for, left(query, 120) AS query FROM pg_stat_activity
        WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid() ORDER BY xact_start LIMIT 3`,
    );
    return `older writers: ${JSON.stringify(rows)}`;
  }

  /** Starts a consumer at the log's current end, so a test applies only what it appends itself. */
  async function startAtHead(consumer: string): Promise<void> {
    await db.pool.query(
      `INSERT INTO consumer_checkpoints (consumer, transaction_id, position)
       SELECT $1, transaction_id, position FROM events ORDER BY transaction_id DESC, position DESC LIMIT 1`,
      [consumer],
    );
  }

  async function appendMany(n: number, type = 'E'): Promise<void> {
    for (let i = 0; i < n; i++)
      await store.append(`c-${randomUUID()}`, [newEvent(type)], { expectedVersion: 'no_stream' });
  }

  it('resumes from its checkpoint after a restart, applying each event once', async () => {
    await appendMany(30);
    const count = async () => (await appliedBy('resume')).length;
    const first = new CheckpointedConsumerRunner(store, recorder('resume'), undefined, { batchSize: 7 });
    await drainAll(first, count);
    const before = await appliedBy('resume');
    await appendMany(20);
    const restarted = new CheckpointedConsumerRunner(store, recorder('resume'), undefined, { batchSize: 7 });
    await drainAll(restarted, count);
    const after = await appliedBy('resume');
    expect(after).toHaveLength(before.length + 20);
    expect(new Set(after.map((r) => r.event_id)).size).toBe(after.length);
  });

  it('reads its checkpoint once, then goes from where it moved it, and does not re-read an empty log after a short batch', async () => {
    const name = `lean-${randomUUID()}`;
    const notifier = new AppendNotifier(db.url);
    await notifier.start();
    const counting = Object.create(store) as EventStore;
    let emptyReads = 0;
    counting.readAll = async (opts) => {
      const events = await store.readAll(opts);
      if (events.length === 0) emptyReads++;
      return events;
    };
    const runner = new CheckpointedConsumerRunner(counting, recorder(name), notifier, { pollMs: 60_000 });
    const checkpointReads = jest.spyOn(runner, 'checkpoint');
    // A transaction of another suite on the same server can hold an event back from the tail for a
    // moment (transaction ids are server-wide): the runner then reads again soon on its own.
    const applied = (type: string, n: number) => async () =>
      (await appliedBy(name)).filter((r) => r.type === type).length === n;
    runner.start();
    try {
      await store.append(`lean-${randomUUID()}`, [newEvent('First')], { expectedVersion: 'no_stream' });
      await waitFor('the runner to catch up with the log', applied('First', 1));
      expect(checkpointReads).toHaveBeenCalledTimes(1);
      checkpointReads.mockClear();
      for (let i = 1; i <= 5; i++) {
        await store.append(`lean-${randomUUID()}`, [newEvent('Lean')], { expectedVersion: 'no_stream' });
        await waitFor(`event ${i} applied`, applied('Lean', i));
      }
      expect(checkpointReads).not.toHaveBeenCalled();
      // after a short batch it waits for the next append instead of reading the log to find it empty
      const emptyBefore = emptyReads;
      await new Promise((r) => setTimeout(r, 500));
      expect(emptyReads).toBe(emptyBefore);
    } finally {
      await runner.stop();
      await notifier.stop();
    }
  });

  /**
   * A runner (60 s poll) caught up with the log, then an event appended while an older
   * transaction is open, which holds it back from every tailer for `holdMs`; resolves with the
   * time from the hold's end until the runner applied the event, with no append after it.
   */
  /** Every transaction with an id open anywhere on the server: what holds tailing back. */
  async function openTransactions(): Promise<string> {
    const { rows } = await db.pool.query(
      `SELECT datname, application_name, state, backend_xid::text, now() - xact_start AS open_for, left(query, 120) AS query
         FROM pg_stat_activity WHERE backend_xid IS NOT NULL ORDER BY xact_start`,
    );
    return JSON.stringify(rows);
  }

  async function heldBack(type: string, holdMs: number): Promise<number> {
    const name = `held-${randomUUID()}`;
    const notifier = new AppendNotifier(db.url);
    await notifier.start();
    const runner = new CheckpointedConsumerRunner(store, recorder(name), notifier, { pollMs: 60_000 });
    runner.start();
    const older = await db.pool.connect();
    const applied = async () => (await appliedBy(name)).some((r) => r.type === type);
    try {
      await waitFor('the runner to catch up with the log', async () => {
        await store.append(`held-${randomUUID()}`, [newEvent('Warm')], { expectedVersion: 'no_stream' });
        return (await appliedBy(name)).some((r) => r.type === 'Warm');
      });
      await older.query('BEGIN');
      await older.query('SELECT pg_current_xact_id()');
      await store.append(`held-${randomUUID()}`, [newEvent(type)], { expectedVersion: 'no_stream' });
      await new Promise((r) => setTimeout(r, holdMs));
      expect(await applied()).toBe(false);
      await older.query('COMMIT');
      const released = Date.now();
      // the log is read below the cluster's oldest transaction, which other suites may hold open a while
      await waitFor(`the held-back ${type} applied`, applied, 15_000).catch(async (e: Error) => {
        throw new Error(`${e.message}; transactions open in the cluster: ${await openTransactions()}`);
      });
      return Date.now() - released;
    } finally {
      older.release();
      await runner.stop();
      await notifier.stop();
    }
  }

  it('applies an announced event held back by an older open transaction once it closes, with no second announcement', async () => {
    // well inside its 60 s poll period: the runner looks again by itself
    expect(await heldBack('Held', 300)).toBeLessThan(15_000);
  });

  it('looks again at least every second while an event stays held back, so a long hold costs at most a second after it ends', async () => {
    // held 5.2 s: looks doubling from 20 ms would next come ~5 s after the hold ends
    expect(await heldBack('HeldLong', 5_200)).toBeLessThan(3_000);
  }, 30_000);

  it('looks again soon when a read applied some events but saw another held back, with nothing announced', async () => {
    // no notifier and a poll far longer than the test: only the read's own sign of a held-back event brings the runner back
    const name = `held-beside-${randomUUID()}`;
    const runner = new CheckpointedConsumerRunner(store, recorder(name), undefined, { pollMs: 60_000 });
    const older = await db.pool.connect();
    const applied = (type: string) => async () => (await appliedBy(name)).some((r) => r.type === type);
    try {
      await store.append(`beside-${randomUUID()}`, [newEvent('Readable')], { expectedVersion: 'no_stream' });
      await older.query('BEGIN');
      await older.query('SELECT pg_current_xact_id()');
      await store.append(`beside-${randomUUID()}`, [newEvent('Behind')], { expectedVersion: 'no_stream' });
      runner.start(); // its first read applies Readable (and the log before it) and finds Behind held back
      await waitFor('the readable event applied', applied('Readable'), 15_000);
      expect(await applied('Behind')()).toBe(false);
      await older.query('COMMIT');
      await waitFor('the held-back event applied once the hold ends', applied('Behind'), 15_000).catch(
        async (e: Error) => {
          throw new Error(`${e.message}; transactions open in the cluster: ${await openTransactions()}`);
        },
      );
    } finally {
      await older.query('ROLLBACK').catch(() => undefined);
      older.release();
      await runner.stop();
    }
  });

  it('reads appends that come close together in one batch when told to wait for them after a wake-up', async () => {
    const name = `coalesce-${randomUUID()}`;
    const notifier = new AppendNotifier(db.url);
    await notifier.start();
    const stream = `coalesce-${randomUUID()}`;
    const batches: number[] = [];
    const caughtUp = `caught-up-${randomUUID()}`;
    let seenCaughtUp = false;
    const consumer = {
      name,
      async handle() {},
      async handleBatch(events: StoredEvent[]) {
        seenCaughtUp ||= events.some((e) => e.streamId === caughtUp);
        const mine = events.filter((e) => e.streamId === stream).length;
        if (mine > 0) batches.push(mine);
      },
    };
    const runner = new CheckpointedConsumerRunner(store, consumer, notifier, { pollMs: 60_000, coalesceMs: 400 });
    runner.start();
    try {
      // the log of the suites before: read up to a marker before the appends that count
      await store.append(caughtUp, [newEvent('Marker')], { expectedVersion: 'no_stream' });
      await waitFor('the runner to reach the marker', () => seenCaughtUp, 10_000);
      for (let i = 0; i < 5; i++) {
        await store.append(stream, [newEvent('Close')], { expectedVersion: i === 0 ? 'no_stream' : i });
        await new Promise((r) => setTimeout(r, 20)); // five appends over ~100 ms, each announced
      }
      await waitFor('the five events applied', () => batches.reduce((a, b) => a + b, 0) === 5, 10_000);
      // without the wait each append is a batch of its own; an event held back by another
      // suite's transaction on this server may split them once
      expect(batches.length).toBeLessThanOrEqual(2);
    } finally {
      await runner.stop();
      await notifier.stop();
    }
  });

  it('runs a consumer with effects outside Postgres without a transaction, each event at least once, to the end of the log', async () => {
    const name = `outside-${randomUUID()}`;
    const seen: string[] = [];
    const consumer = {
      name,
      outsideTransaction: true as const,
      handle: async (e: StoredEvent) => void seen.push(e.id),
    };
    const stream = `outside-${randomUUID()}`;
    const appended = await store.append(
      stream,
      Array.from({ length: 30 }, () => newEvent('Outside')),
      { expectedVersion: 'no_stream' },
    );
    const runners = [0, 1].map(() => new CheckpointedConsumerRunner(store, consumer, undefined, { batchSize: 7 }));
    // tailing may lag behind a transaction of another suite on the server, never skip
    await waitFor('both runners to reach the appended events', async () => {
      await Promise.all(runners.map((r) => r.drain()));
      return appended.events.every((e) => seen.includes(e.id));
    });
    expect(await runners[0].checkpoint()).toEqual(checkpointOf(appended.events[appended.events.length - 1]));
  });

  it('starts over when its checkpoint row is deleted under it (a rebuild), instead of writing back the position it remembers', async () => {
    const name = `rebuilt-${randomUUID()}`;
    const runner = new CheckpointedConsumerRunner(store, recorder(name));
    const first = await store.append(`rebuilt-${randomUUID()}`, [newEvent('Before')], { expectedVersion: 'no_stream' });
    const timesApplied = async (id: string) => (await appliedBy(name)).filter((r) => r.event_id === id).length;
    await waitFor(
      'the first event applied',
      async () => (await runner.drain(), (await timesApplied(first.events[0].id)) === 1),
    );
    const appliedOnce = (await appliedBy(name)).length;

    await db.pool.query('DELETE FROM consumer_checkpoints WHERE consumer = $1', [name]);
    const after = await store.append(`rebuilt-${randomUUID()}`, [newEvent('After')], { expectedVersion: 'no_stream' });
    // its first batch loses the compare-and-set (the row it remembers is gone); the next reads the
    // checkpoint again, the start of the log, and serves the whole log again
    await waitFor(
      'the log served again from the start',
      async () => (await runner.drain(), (await timesApplied(after.events[0].id)) === 1),
    );
    const applied = await appliedBy(name);
    expect(applied.filter((r) => r.event_id === first.events[0].id)).toHaveLength(2);
    expect(applied.length).toBe(2 * appliedOnce + 1);
  });

  it('lets one runner of an exclusive consumer work at a time, and another take over when it stops', async () => {
    const name = `exclusive-${randomUUID()}`;
    const handledBy = { a: 0, b: 0 };
    const counting = (who: 'a' | 'b') => ({
      ...recorder(name),
      async handle(event: StoredEvent, tx: PoolClient) {
        handledBy[who]++;
        await recorder(name).handle(event, tx);
      },
    });
    const options = { batchSize: 10, pollMs: 20, exclusive: true };
    const a = new CheckpointedConsumerRunner(store, counting('a'), undefined, options);
    const b = new CheckpointedConsumerRunner(store, counting('b'), undefined, options);
    const total = await storedCount();
    a.start();
    await waitFor('a to lead and catch up', async () => (await appliedBy(name)).length === total, 20_000);
    b.start();
    await appendMany(30);
    await waitFor('a to apply the new events', async () => (await appliedBy(name)).length === total + 30, 20_000);
    expect(handledBy.b).toBe(0); // b waited: it never read, let alone wrote, a batch

    await a.stop(); // its lease goes with it
    await appendMany(30);
    await waitFor('b to take over', async () => (await appliedBy(name)).length === total + 60, 20_000);
    await b.stop();
    expect(handledBy.b).toBeGreaterThanOrEqual(30);
    const applied = await appliedBy(name);
    expect(new Set(applied.map((r) => r.event_id)).size).toBe(applied.length); // each once
  });

  it('listens for appends only while it leads an exclusive consumer: a standby holds no LISTEN connection', async () => {
    const name = `listening-${randomUUID()}`;
    const apps = { a: `listen-a-${randomUUID().slice(0, 8)}`, b: `listen-b-${randomUUID().slice(0, 8)}` };
    const listening = async () =>
      (
        await db.pool.query<{ app: string }>(
          `SELECT application_name AS app FROM pg_stat_activity WHERE application_name IN ($1, $2) AND query LIKE 'LISTEN%'`,
          [apps.a, apps.b],
        )
      ).rows.map((r) => r.app);
    const notifierOf = (app: string) => {
      const url = new URL(db.url);
      url.searchParams.set('application_name', app);
      return new AppendNotifier(url.toString());
    };
    const [na, nb] = [notifierOf(apps.a), notifierOf(apps.b)];
    await Promise.all([na.start(), nb.start()]); // as each process's module does, before anything listens
    // a poll far longer than the test: only an announcement wakes the leader in time
    const options = { pollMs: 60_000, exclusive: true };
    const a = new CheckpointedConsumerRunner(store, recorder(name), na, options);
    const b = new CheckpointedConsumerRunner(store, recorder(name), nb, { ...options, pollMs: 100 });
    try {
      const total = await storedCount();
      a.start();
      await waitFor('a to lead and catch up', async () => (await appliedBy(name)).length === total, 20_000);
      b.start();
      await waitFor('a to listen', async () => (await listening()).includes(apps.a), 5_000);
      await new Promise((r) => setTimeout(r, 300)); // b has tried the lease a few times by now
      expect(await listening()).toEqual([apps.a]);
      await appendMany(3);
      await waitFor(
        'a, woken by the announcement, to apply them',
        async () => (await appliedBy(name)).length === total + 3,
        5_000,
      );

      await a.stop();
      await waitFor('b to lead and listen instead', async () => (await listening()).join() === apps.b, 5_000);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await Promise.all([na.stop(), nb.stop()]);
    }
  });

  it('lets two runners of one consumer race without applying anything twice', async () => {
    await appendMany(200);
    const a = new CheckpointedConsumerRunner(store, recorder('race'), undefined, { batchSize: 10, pollMs: 5 });
    const b = new CheckpointedConsumerRunner(store, recorder('race'), undefined, { batchSize: 10, pollMs: 5 });
    a.start();
    b.start();
    const total = await storedCount();
    await waitFor('both runners to catch up', async () => (await appliedBy('race')).length >= total, 20_000);
    await Promise.all([a.stop(), b.stop()]);
    const rows = await appliedBy('race');
    expect(rows).toHaveLength(total);
    expect(new Set(rows.map((r) => r.event_id)).size).toBe(total);
  });

  it('dead-letters an event it keeps failing on and carries on with the rest', async () => {
    await startAtHead('dlq');
    const before = await storedCount();
    await appendMany(3, 'Good');
    await appendMany(1, 'Poison');
    await appendMany(3, 'Good');
    const sut = new CheckpointedConsumerRunner(
      store,
      recorder('dlq', (e) => e.type === 'Poison'),
      undefined,
      { maxAttempts: 3 },
    );
    await drainAll(sut, async () => (await appliedBy('dlq')).length + before, 1);
    const { rows } = await db.pool.query('SELECT attempts FROM consumer_dead_letters WHERE consumer = $1', ['dlq']);
    expect(rows).toEqual([{ attempts: 3 }]);
    const applied = await appliedBy('dlq');
    expect(applied.filter((r) => r.type === 'Poison')).toHaveLength(0);
    expect(applied.map((r) => r.type)).toEqual(['Good', 'Good', 'Good', 'Good', 'Good', 'Good']);
  });
});

describe(`${CheckpointedConsumerRunner.name} under faults`, () => {
  let db: TestDatabase;
  let store: EventStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
  });
  afterAll(() => db.drop());

  const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });

  it('retries transient errors (a deadlock, the database away) without dead-lettering, and applies once', async () => {
    const stream = `t-${randomUUID()}`;
    await store.append(stream, [newEvent('Fragile')], { expectedVersion: 'no_stream' });
    let tries = 0;
    const applied: string[] = [];
    const runner = new CheckpointedConsumerRunner(
      store,
      {
        name: 'transient',
        async handle(e: StoredEvent) {
          if (e.streamId !== stream) return;
          if (++tries <= 6) throw deadlock();
          applied.push(e.id);
        },
      },
      undefined,
      { pollMs: 20, maxAttempts: 3, maxBackoffMs: 40 },
    );
    runner.start();
    await waitFor('the event to be applied after six deadlocks', () => applied.length === 1, 20_000);
    await runner.stop();
    expect(tries).toBe(7);
    const { rows } = await db.pool.query('SELECT 1 FROM consumer_dead_letters WHERE consumer = $1', ['transient']);
    expect(rows).toHaveLength(0);
  });

  it('spaces the tries at an event it cannot handle by a growing backoff before dead-lettering it', async () => {
    const stream = `p-${randomUUID()}`;
    await store.append(stream, [newEvent('Poison')], { expectedVersion: 'no_stream' });
    const triedAt: number[] = [];
    const runner = new CheckpointedConsumerRunner(
      store,
      {
        name: 'spaced',
        async handle(e: StoredEvent) {
          if (e.streamId !== stream) return;
          triedAt.push(Date.now());
          throw new Error('cannot handle this event');
        },
      },
      undefined,
      { pollMs: 5, maxAttempts: 4, maxBackoffMs: 10_000 },
    );
    runner.start();
    const dead = async () =>
      (await db.pool.query('SELECT attempts FROM consumer_dead_letters WHERE consumer = $1', ['spaced'])).rows;
    await waitFor('the poison event to be dead-lettered', async () => (await dead()).length === 1, 20_000);
    await runner.stop();
    expect(await dead()).toEqual([{ attempts: 4 }]);
    // after the 1st, 2nd and 3rd failed try: 200·2^(n-1) ms with half jitter, at least 100 + 200 + 400 ms
    // (a batch that fails is retried one event at a time at once, which is not a new try)
    expect(triedAt.length).toBeGreaterThanOrEqual(4);
    expect(triedAt[triedAt.length - 1] - triedAt[0]).toBeGreaterThanOrEqual(700);
  });
});
