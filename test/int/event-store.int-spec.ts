import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { PoolClient } from 'pg';
import {
  AppendNotifier,
  CheckpointedConsumerRunner,
  checkpointOf,
  EventStore,
  LOG_START,
  LogCheckpoint,
  NewEvent,
  StoredEvent,
  WrongExpectedVersionError,
} from '@parley/event-store';
import { countingPool } from '../support/counting-pool';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { waitFor } from '../support/wait-for';

const newEvent = (type = 'Something', data: unknown = {}): NewEvent => ({ id: randomUUID(), type, data });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(EventStore.name, () => {
  let db: TestDatabase;
  let sut: EventStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    sut = new EventStore(db.pool);
  });
  afterAll(() => db.drop());

  /** Reads the whole log from `from` as a tailer would, batch by batch. */
  async function tail(from: LogCheckpoint = LOG_START): Promise<{ events: StoredEvent[]; at: LogCheckpoint }> {
    const events: StoredEvent[] = [];
    let at = from;
    for (;;) {
      const batch = await sut.readAll({ after: at, limit: 100 });
      if (batch.length === 0) return { events, at };
      events.push(...batch);
      at = checkpointOf(batch[batch.length - 1]);
    }
  }

  async function openTransaction(): Promise<PoolClient> {
    const client = await db.pool.connect();
    await client.query('BEGIN');
    return client;
  }

  it('appends with versions from 1 and reads the stream back', async () => {
    const stream = `s-${randomUUID()}`;
    const first = await sut.append(stream, [newEvent('A', { n: 1 }), newEvent('B', { n: 2 })], {
      expectedVersion: 'no_stream',
    });
    expect(first.nextExpectedVersion).toBe(2);
    const second = await sut.append(stream, [newEvent('C')], { expectedVersion: 2 });
    expect(second.events[0].version).toBe(3);
    const read = await sut.readStream(stream);
    expect(read.map((e) => [e.version, e.type])).toEqual([
      [1, 'A'],
      [2, 'B'],
      [3, 'C'],
    ]);
    expect(read[0].data).toEqual({ n: 1 });
    expect(BigInt(read[2].position)).toBeGreaterThan(BigInt(read[0].position));
    expect(await sut.readStream(stream, { after: 1, limit: 1 })).toHaveLength(1);
  });

  it('refuses a wrong expected version, and no_stream on an existing stream', async () => {
    const stream = `s-${randomUUID()}`;
    await sut.append(stream, [newEvent()], { expectedVersion: 'no_stream' });
    await expect(sut.append(stream, [newEvent()], { expectedVersion: 'no_stream' })).rejects.toBeInstanceOf(
      WrongExpectedVersionError,
    );
    await expect(sut.append(stream, [newEvent()], { expectedVersion: 5 })).rejects.toMatchObject({
      actual: 1,
      expected: 5,
    });
    expect(await sut.streamVersion(stream)).toBe(1);
  });

  it('treats a re-append of the same event ids as a no-op returning the original result', async () => {
    const stream = `s-${randomUUID()}`;
    const events = [newEvent('A'), newEvent('B')];
    const first = await sut.append(stream, events, { expectedVersion: 'no_stream' });
    await sut.append(stream, [newEvent('C')], { expectedVersion: 2 });
    const retry = await sut.append(stream, events, { expectedVersion: 'no_stream' });
    expect(retry.events.map((e) => e.position)).toEqual(first.events.map((e) => e.position));
    expect(retry.nextExpectedVersion).toBe(2);
    expect(await sut.streamVersion(stream)).toBe(3);
  });

  it('appends in one statement: no transaction block, no separate version or id lookups', async () => {
    const { pool: counting, statements } = countingPool(db.pool);
    const store = new EventStore(counting);
    const stream = `s-${randomUUID()}`;
    await store.append(stream, [newEvent('A'), newEvent('B')], { expectedVersion: 'no_stream' });
    await store.append(stream, [newEvent('C')], { expectedVersion: 2 });
    await store.announced();
    const appends = statements.filter((q) => q.includes('INSERT INTO events'));
    expect(appends).toHaveLength(2);
    expect(statements).toEqual(appends); // no BEGIN/COMMIT, no separate version or id lookups
  });

  it('refuses a stale expected version in that one statement, reporting the current version', async () => {
    const stream = `s-${randomUUID()}`;
    await sut.append(stream, [newEvent(), newEvent(), newEvent()], { expectedVersion: 'no_stream' });
    const stale = sut.append(stream, [newEvent()], { expectedVersion: 1 });
    await expect(stale).rejects.toMatchObject({ name: WrongExpectedVersionError.name, actual: 3 });
    expect(await sut.streamVersion(stream)).toBe(3);
  });

  it('lets exactly one of 20 concurrent appends at the same expected version win', async () => {
    const stream = `s-${randomUUID()}`;
    await sut.append(stream, [newEvent()], { expectedVersion: 'no_stream' });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => sut.append(stream, [newEvent()], { expectedVersion: 1 })),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(19);
    expect(lost.every((r) => r.reason instanceof WrongExpectedVersionError)).toBe(true);
    expect(await sut.streamVersion(stream)).toBe(2);
  });

  it('does not let a tailer skip an event whose transaction commits after a later-positioned one', async () => {
    const { at: start } = await tail();
    const slow = await openTransaction();
    const fast = await openTransaction();
    try {
      // the slow writer takes the lower position, the fast one the higher, and commits first
      const low = await sut.appendIn(slow, `slow-${randomUUID()}`, [newEvent('Low')], 'no_stream');
      const high = await sut.appendIn(fast, `fast-${randomUUID()}`, [newEvent('High')], 'no_stream');
      expect(BigInt(low.events[0].position)).toBeLessThan(BigInt(high.events[0].position));
      await fast.query('COMMIT');

      const whileSlowRuns = await tail(start);
      expect(whileSlowRuns.events.map((e) => e.type)).not.toContain('Low');

      await slow.query('COMMIT');
      // other databases' transactions on the same server may hold the snapshot back a moment
      const seen = whileSlowRuns.events.filter((e) => ['High', 'Low'].includes(e.type)).map((e) => e.type);
      let at = whileSlowRuns.at;
      await waitFor('both events', async () => {
        const more = await tail(at);
        at = more.at;
        seen.push(...more.events.filter((e) => ['High', 'Low'].includes(e.type)).map((e) => e.type));
        return seen.length >= 2;
      });
      expect(seen.sort()).toEqual(['High', 'Low']);
    } finally {
      slow.release();
      fast.release();
    }
  });

  it('orders the log by transaction id as a number where its digit count changes (9, then 10)', async () => {
    // Transaction ids of finished writers, set by hand: 9 and 10 are below every live xid on any
    // server. Sorted as text, '10' came before '9' and a tailer reading in batches went back
    // over what it had served (the duplicates a fresh CI run saw near xid 10,000).
    const insert = (xid: string, type: string) =>
      db.pool.query(
        `INSERT INTO events (event_id, stream_id, version, type, data, transaction_id)
         VALUES ($1, $2, 1, $3, '{}', $4::xid8)`,
        [randomUUID(), `digits-${randomUUID()}`, type, xid],
      );
    await insert('10', 'Ten');
    await insert('9', 'Nine');
    // one event a batch, as a tailer at its batch boundary sees them
    const served: StoredEvent[] = [];
    let at = LOG_START;
    for (;;) {
      const [next] = await sut.readAll({ after: at, limit: 1 });
      if (!next) break;
      served.push(next);
      at = checkpointOf(next);
    }
    expect(served.slice(0, 2).map((e) => [e.transactionId, e.type])).toEqual([
      ['9', 'Nine'],
      ['10', 'Ten'],
    ]);
    const xids = served.map((e) => BigInt(e.transactionId));
    expect(xids).toEqual([...xids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(new Set(served.map((e) => e.id)).size).toBe(served.length);
  });

  it('serves every event exactly once, in commit order, to a tailer racing 8 writers × 500 events', async () => {
    const { at: start } = await tail();
    const commits: Array<{ id: string; begunAt: number; committedAt: number }> = [];
    let writing = true;
    let writersDoneAt = Infinity;
    const seen: StoredEvent[] = [];
    const tailer = (async () => {
      let at = start;
      const deadline = () => !writing && Date.now() > writersDoneAt + 30_000;
      // until every written event is seen (visibility may lag behind the writers), within a bound
      while ((writing || seen.filter((e) => e.type === 'Written').length < 4000) && !deadline()) {
        const batch = await sut.readAll({ after: at, limit: 200 });
        if (batch.length) at = checkpointOf(batch[batch.length - 1]);
        else await sleep(2);
        seen.push(...batch);
      }
    })();
    const writer = async (w: number) => {
      const stream = `writer-${w}-${randomUUID()}`;
      for (let i = 0; i < 500; i++) {
        const begunAt = performance.now();
        const event = newEvent('Written', { w, i });
        const client = await openTransaction();
        try {
          await sut.appendIn(client, stream, [event], i === 0 ? 'no_stream' : i);
          if (Math.random() < 0.3) await sleep(Math.random() * 4); // random commit delay
          await client.query('COMMIT');
        } finally {
          client.release();
        }
        commits.push({ id: event.id, begunAt, committedAt: performance.now() });
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));
    writersDoneAt = Date.now();
    writing = false;
    await tailer;

    expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
    // earlier tests' events may surface here too (their visibility can lag): judge this test's own
    const ids = seen.filter((e) => e.type === 'Written').map((e) => e.id);
    expect(ids.length).toBe(4000);
    // commit order: whatever committed before another transaction began is served before it
    const index = new Map(ids.map((id, i) => [id, i]));
    const byCommit = [...commits].sort((a, b) => a.committedAt - b.committedAt);
    let maxIndexCommitted = -1;
    let ci = 0;
    const violations: string[] = [];
    for (const c of [...commits].sort((a, b) => a.begunAt - b.begunAt)) {
      while (ci < byCommit.length && byCommit[ci].committedAt < c.begunAt) {
        maxIndexCommitted = Math.max(maxIndexCommitted, index.get(byCommit[ci].id)!);
        ci++;
      }
      if (index.get(c.id)! < maxIndexCommitted) violations.push(c.id);
    }
    expect(violations).toEqual([]);
  }, 180_000); // 4,000 transactions: a minute or more on a loaded 2-core machine

  it('never skips or repeats an event under random interleavings (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ events: fc.integer({ min: 1, max: 3 }), delayMs: fc.integer({ min: 0, max: 5 }) }), {
          minLength: 2,
          maxLength: 6,
        }),
        async (writers) => {
          const { at: start } = await tail();
          const seen: StoredEvent[] = [];
          let at = start;
          // one tailer: its reads are serialised, interleaved with the writers' steps
          let reading = Promise.resolve();
          const tailOnce = () =>
            (reading = reading.then(async () => {
              const r = await tail(at);
              seen.push(...r.events);
              at = r.at;
            }));
          const written = await Promise.all(
            writers.map(async (w) => {
              const client = await openTransaction();
              try {
                const events = Array.from({ length: w.events }, () => newEvent('P'));
                await sut.appendIn(client, `p-${randomUUID()}`, events, 'no_stream');
                await tailOnce();
                await sleep(w.delayMs);
                await client.query('COMMIT');
                await tailOnce();
                return events.map((e) => e.id);
              } finally {
                client.release();
              }
            }),
          );
          // the tailer may lag (a transaction anywhere in the cluster holds back the snapshot xmin), never skip
          const expected = written.flat().length;
          const mineSeen = () => seen.filter((e) => written.flat().includes(e.id)).length;
          await waitFor(`${expected} events`, async () => (await tailOnce(), mineSeen() >= expected), 20_000);
          expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
          const mine = new Set(written.flat());
          expect(
            seen
              .filter((e) => mine.has(e.id))
              .map((e) => e.id)
              .sort(),
          ).toEqual([...mine].sort());
        },
      ),
      { numRuns: 25 },
    );
  }, 180_000);
});

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
    await waitFor(
      'the consumer to catch up',
      async () => (await runner.drain(), (await applied()) + missing >= total),
      20_000,
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
    // moment (transaction ids are server-wide); the runner then waits for the next append. The
    // test nudges it, as a later append would, if an event is not applied within 300 ms.
    let nudges = 0;
    const applied = (type: string, n: number) => {
      const since = Date.now();
      return async () => {
        const done = (await appliedBy(name)).filter((r) => r.type === type).length === n;
        if (!done && Date.now() - since > 300) {
          nudges++;
          notifier.emit('append', 'nudge');
        }
        return done;
      };
    };
    runner.start();
    try {
      await store.append(`lean-${randomUUID()}`, [newEvent('First')], { expectedVersion: 'no_stream' });
      await waitFor('the runner to catch up with the log', applied('First', 1));
      expect(checkpointReads).toHaveBeenCalledTimes(1);
      checkpointReads.mockClear();
      [emptyReads, nudges] = [0, 0];
      for (let i = 1; i <= 5; i++) {
        await store.append(`lean-${randomUUID()}`, [newEvent('Lean')], { expectedVersion: 'no_stream' });
        await waitFor(`event ${i} applied`, applied('Lean', i));
      }
      expect(checkpointReads).not.toHaveBeenCalled();
      // after a short batch it waits for the next append instead of reading the log to find it empty
      // (a nudge for a held-back event may cost one empty read)
      expect(emptyReads).toBeLessThanOrEqual(nudges);
    } finally {
      await runner.stop();
      await notifier.stop();
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
    await appendMany(3, 'Good');
    await appendMany(1, 'Poison');
    await appendMany(3, 'Good');
    const sut = new CheckpointedConsumerRunner(
      store,
      recorder('dlq', (e) => e.type === 'Poison'),
      undefined,
      { maxAttempts: 3 },
    );
    await drainAll(sut, async () => (await appliedBy('dlq')).length, 1);
    const { rows } = await db.pool.query('SELECT attempts FROM consumer_dead_letters WHERE consumer = $1', ['dlq']);
    expect(rows).toEqual([{ attempts: 3 }]);
    const applied = await appliedBy('dlq');
    expect(applied.filter((r) => r.type === 'Poison')).toHaveLength(0);
    expect(applied.length).toBe((await store.readAll({ limit: 100_000 })).length - 1);
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

describe(AppendNotifier.name, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('hears of every stream a burst of appends wrote to, and of a caller-transaction append only once it commits', async () => {
    const notifier = new AppendNotifier(db.url);
    const heard = new Set<string>();
    notifier.on('append', (streamId: string) => heard.add(streamId));
    await notifier.start();
    try {
      const store = new EventStore(db.pool);
      const streams = Array.from({ length: 30 }, () => `burst-${randomUUID()}`);
      await Promise.all(streams.map((s) => store.append(s, [newEvent()], { expectedVersion: 'no_stream' })));
      await waitFor('every appended stream to be announced', async () => streams.every((s) => heard.has(s)), 5_000);

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

  it('leaves no connection behind when stopped while it is still connecting', async () => {
    const app = `notifier-${randomUUID().slice(0, 8)}`;
    const url = new URL(db.url);
    url.searchParams.set('application_name', app);
    const connections = async () =>
      Number(
        (await db.pool.query('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [app])).rows[0]
          .n,
      );
    for (let i = 0; i < 5; i++) {
      const notifier = new AppendNotifier(url.toString());
      const starting = notifier.start();
      await notifier.stop();
      await starting;
    }
    await sleep(300);
    expect(await connections()).toBe(0);
  });
});

describe('EventStore.withTransaction when the server ends the connection', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('fails the transaction, not the process, and the pool goes on with a new connection', async () => {
    const store = new EventStore(db.pool);
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      const failed = store.withTransaction(async (tx) => {
        const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        // as a restart does (57P01), while this transaction sits between two queries
        await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
        await sleep(300);
        await tx.query('SELECT 1');
      });
      await expect(failed).rejects.toBeDefined();
      expect(uncaught).toEqual([]);
      const stream = `after-${randomUUID()}`;
      await store.append(stream, [newEvent()], { expectedVersion: 'no_stream' });
      expect(await store.streamVersion(stream)).toBe(1);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
