import { randomUUID } from 'node:crypto';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { AppendBatches, EventStore } from '@parley/event-store';
import { newEvent } from '../support/factories/new-event';
import { createTestDatabase, TestDatabase } from '../support/test-database';

type SpanProcessor = NonNullable<ConstructorParameters<typeof NodeSDK>[0]>['spanProcessors'] & object;
type EndedSpan = Parameters<SpanProcessor[number]['onEnd']>[0];

/** What an operator sees of group commit: how many appends shared each append's statement. */
describe(AppendBatches.name, () => {
  let db: TestDatabase;
  const ended: EndedSpan[] = [];
  const sdk = new NodeSDK({
    spanProcessors: [
      {
        onStart: () => undefined,
        onEnd: (s) => void ended.push(s),
        forceFlush: async () => {},
        shutdown: async () => {},
      },
    ],
    metricReaders: [],
    logRecordProcessors: [],
    resourceDetectors: [],
    instrumentations: [],
  });
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
