import { randomUUID } from 'node:crypto';
import { priceTableWith } from '@parley/agent';
import { BudgetReservations, ReadModelWrites, UsageLedger, UsageRow } from '@parley/read-models';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { waitFor } from '../support/wait-for';

/** The shipped prices (no LLM_PRICES here). */
const { costUsd } = priceTableWith();

const HOUR_MS = 3_600_000;

/** A ledger line of `ownerId`'s turn, as the projection writes one, recording the call at `version`. */
const line = (ownerId: string, turnId: string, version: number, usd: number): UsageRow => ({
  event_id: randomUUID(),
  conversation_id: randomUUID(),
  version,
  owner_id: ownerId,
  turn_id: turnId,
  kind: 'tool_call',
  model: 'claude-sonnet-4-5',
  input_tokens: 1,
  output_tokens: 1,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  cost_usd: usd,
  batched: false,
  at: new Date(),
});

/** Reservations against real Postgres: one reader's checks serialised, whatever runs them at once. */
describe(BudgetReservations.name, () => {
  let db: TestDatabase;
  let sut: BudgetReservations;

  beforeAll(async () => {
    db = await createTestDatabase();
    sut = new BudgetReservations(db.pool);
  });
  afterAll(() => db.drop());

  const reserve = (ownerId: string, usd: number, limitUsd: number, turn?: { turnId: string; atVersion: number }) =>
    sut.reserve({ ownerId, limitUsd, usd, turn, ttlMs: HOUR_MS }, costUsd);
  const openUsd = async (ownerId: string) =>
    (
      await db.pool.query('SELECT coalesce(sum(usd), 0)::float8 AS usd FROM budget_reservations WHERE owner_id = $1', [
        ownerId,
      ])
    ).rows[0].usd as number;

  it('works a call’s worst case out only when a budget holds', async () => {
    const reader = `reader-${randomUUID()}`;
    const worstCase = jest.fn(() => 0.25);
    const unbudgeted = await sut.reserve({ ownerId: reader, limitUsd: null, usd: worstCase, ttlMs: HOUR_MS }, costUsd);
    expect(unbudgeted.kind).toBe('unlimited');
    expect(worstCase).not.toHaveBeenCalled();

    const budgeted = await sut.reserve({ ownerId: reader, limitUsd: 1, usd: worstCase, ttlMs: HOUR_MS }, costUsd);
    expect(budgeted.kind).toBe('reserved');
    expect(worstCase).toHaveBeenCalledTimes(1);
    expect(await openUsd(reader)).toBe(0.25);
  });

  it('admits exactly the calls that fit when 50 reserve at once, and no other reader is held by them', async () => {
    const reader = `reader-${randomUUID()}`;
    const other = `reader-${randomUUID()}`;
    // 7 calls of 0.125 fit in 0.875; the eighth would not
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, (_, i) => reserve(i % 10 === 9 ? other : reader, 0.125, 0.875)),
    );
    const admitted = (owner: number) =>
      outcomes.filter((o, i) => o.kind === 'reserved' && (i % 10 === 9 ? 1 : 0) === owner).length;
    expect(admitted(0)).toBe(7);
    expect(admitted(1)).toBe(5); // the other reader's 5 all fit
    expect(await openUsd(reader)).toBeCloseTo(0.875, 9);
    const refused = outcomes.find((o) => o.kind === 'refused');
    expect(refused).toMatchObject({ standing: { limitUsd: 0.875, spentUsd: 0, reservedUsd: 0.875, callUsd: 0.125 } });
  }, 30_000);

  it("frees the room when a call's line reaches the ledger, counting its real cost instead of its worst case", async () => {
    const reader = `reader-${randomUUID()}`;
    const turnId = randomUUID();
    const first = await reserve(reader, 0.5, 1, { turnId, atVersion: 3 });
    expect(first.kind).toBe('reserved');
    expect((await reserve(reader, 0.6, 1)).kind).toBe('refused'); // 0.5 held + 0.6 > 1

    // the projection writes the call's line (version 4) and settles its reservation in the same statement
    await new ReadModelWrites(db.pool).write({
      deleted: [],
      conversations: [],
      messages: [],
      usage: [line(reader, turnId, 4, 0.1)],
    });
    expect(await openUsd(reader)).toBe(0);
    const second = await reserve(reader, 0.6, 1, { turnId, atVersion: 4 });
    expect(second.kind).toBe('reserved');
    // spent 0.1 + reserved 0.6 + 0.4 > 1: the ledger's line counts, once
    const third = await reserve(reader, 0.4, 1);
    expect(third).toMatchObject({ kind: 'refused', standing: { spentUsd: 0.1, reservedUsd: 0.6 } });
  });

  it('keeps the reservation of a call planned after the line (a later version) until its own line comes', async () => {
    const reader = `reader-${randomUUID()}`;
    const turnId = randomUUID();
    await reserve(reader, 0.25, 1, { turnId, atVersion: 5 });
    // the previous call's line (version 5), written by a projection running behind
    await new UsageLedger(db.pool).record([line(reader, turnId, 5, 0.01)]);
    expect(await openUsd(reader)).toBe(0.25);
    await new UsageLedger(db.pool).record([line(reader, turnId, 7, 0.02)]);
    expect(await openUsd(reader)).toBe(0);
  });

  it('counts no reservation whose line is in the ledger though nothing deleted it (a line written by an earlier release)', async () => {
    const reader = `reader-${randomUUID()}`;
    const turnId = randomUUID();
    await reserve(reader, 0.5, 1, { turnId, atVersion: 2 });
    await db.pool.query(
      `INSERT INTO usage_records (event_id, conversation_id, version, owner_id, turn_id, kind, model, input_tokens,
                                  output_tokens, cache_read_input_tokens, cache_creation_input_tokens, cost_usd, at)
       VALUES ($1, $2, 3, $3, $4, 'answer', 'claude-sonnet-4-5', 1, 1, 0, 0, 0.1, now())`,
      [randomUUID(), randomUUID(), reader, turnId],
    );
    expect(await openUsd(reader)).toBe(0.5); // still in the table
    // 0.1 spent + 0.9: the 0.5 held for the call the line records counts no more
    expect(await reserve(reader, 0.9, 1)).toMatchObject({ kind: 'reserved' });
  });

  it("settles a book's reservation by id with its line; releases one never used; forgets an expired one", async () => {
    const reader = `reader-${randomUUID()}`;
    const held = await reserve(reader, 0.3, 1);
    const unused = await reserve(reader, 0.3, 1);
    if (held.kind !== 'reserved' || unused.kind !== 'reserved') throw new Error('both fit');
    await new UsageLedger(db.pool).record([{ ...line(reader, randomUUID(), 1, 0.05), turn_id: null }], [held.id]);
    await sut.release(unused.id);
    expect(await openUsd(reader)).toBe(0);

    // a crashed worker's reservation: counted until it expires (2 s here), then not
    const orphan = await sut.reserve({ ownerId: reader, limitUsd: 1, usd: 0.9, ttlMs: 2_000 }, costUsd);
    expect(orphan.kind).toBe('reserved');
    expect((await reserve(reader, 0.1, 1)).kind).toBe('refused'); // 0.05 + 0.9 + 0.1 > 1
    await waitFor(
      'the orphaned reservation to expire and the call to fit',
      async () => (await reserve(reader, 0.1, 1)).kind === 'reserved',
      10_000,
      100,
    );
  });

  it("forgets an erased reader's reservations with their id", async () => {
    const reader = `reader-${randomUUID()}`;
    await reserve(reader, 0.2, 1);
    await new UsageLedger(db.pool).forgetReader(reader);
    expect(await openUsd(reader)).toBe(0);
  });
});
