import { randomUUID } from 'node:crypto';
import { WebhookEndpoints } from '@parley/webhooks';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/** A reader's endpoint limit holds however many registrations arrive at once. */
describe(WebhookEndpoints.name, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  const register = (sut: WebhookEndpoints, ownerId: string, n: number) =>
    sut.create(ownerId, { url: `https://hooks.example.com/${n}`, events: ['turn.ended'], secret: 'whsec_x' }, 20);

  it('lets exactly one of 40 registrations at once through for a reader holding 19 of 20', async () => {
    const sut = new WebhookEndpoints(db.pool);
    const owner = `reader-${randomUUID()}`;
    for (let n = 0; n < 19; n++) expect(await register(sut, owner, n)).not.toBeNull();
    const neighbour = `reader-${randomUUID()}`;
    // every connection open beforehand, as in a running API: the registrations then truly overlap
    await Promise.all(Array.from({ length: 20 }, () => db.pool.query('SELECT pg_sleep(0.05)')));

    const [mine, theirs] = await Promise.all([
      Promise.all(Array.from({ length: 40 }, (_, n) => register(sut, owner, 100 + n))),
      // another reader's registrations meanwhile wait for none of these
      Promise.all(Array.from({ length: 3 }, (_, n) => register(sut, neighbour, n))),
    ]);

    expect(mine.filter((e) => e !== null)).toHaveLength(1);
    expect(await sut.list(owner)).toHaveLength(20);
    expect(theirs.every((e) => e !== null)).toBe(true);
  });
});
