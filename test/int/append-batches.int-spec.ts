import { randomUUID } from 'node:crypto';
import { AppendBatches, EventStore } from '@parley/event-store';
import { newEvent } from '../support/factories/new-event';
import { recordedSpans } from '../support/recorded-spans';
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
});
