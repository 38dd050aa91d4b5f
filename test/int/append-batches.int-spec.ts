import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { AppendBatches, EventStore, WrongExpectedVersionError } from '@parley/event-store';
import { newEvent } from '../support/factories/new-event';
import { recordedSpans } from '../support/recorded-spans';
import { untilWaitingOnLock } from '../support/lock-waits';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/** What an operator sees of group commit: how many appends shared each append's statement. */
describe(AppendBatches.name, () => {
  let db: TestDatabase;
  const { sdk, ended } = recordedSpans();
  beforeAll(async () => {
    sdk.start();
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
    await sdk.shutdown();
  });

  it("marks each append's span with the number of appends its statement carried", async () => {
    const store = new EventStore(db.pool);
    // the first two go at once, one a statement (two in flight at most); the other four wait and go together
    await Promise.all(
      Array.from({ length: 6 }, () =>
        store.append(`grouped-${randomUUID()}`, [newEvent()], { expectedVersion: 'no_stream' }),
      ),
    );
    const shared = ended
      .filter((s) => s.name === 'append grouped')
      .map((s) => s.attributes['parley.append.statement_appends']);
    expect(shared.sort()).toEqual([1, 1, 4, 4, 4, 4]);
  });

  it('keeps its connection when a race fails its statement (pg-pool would close it, and Postgres make a new one)', async () => {
    const pool = new Pool({ connectionString: db.url, max: 1 });
    try {
      const store = new EventStore(pool);
      const stream = `raced-${randomUUID()}`;
      const backend = async () => (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      const before = await backend();
      // another process's append of the same version, not committed yet
      const rival = await db.pool.connect();
      await rival.query('BEGIN');
      await new EventStore(db.pool).appendIn(rival, stream, [newEvent('Rival')], 'no_stream');
      const appending = store.append(stream, [newEvent('A')], { expectedVersion: 'no_stream' }).catch((e) => e);
      await untilWaitingOnLock(db.pool, 'WITH current AS', "the append to wait on the rival's row");
      await rival.query('COMMIT');
      rival.release();
      expect(await appending).toBeInstanceOf(WrongExpectedVersionError);
      expect(await backend()).toBe(before);
    } finally {
      await pool.end();
    }
  });
});
