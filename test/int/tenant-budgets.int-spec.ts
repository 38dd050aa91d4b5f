import { randomUUID } from 'node:crypto';
import { priceTableWith } from '@parley/agent';
import { BudgetReservations, TenantBudgets, TenantLedger, UsageLedger, UsageRow } from '@parley/read-models';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/** The shipped prices (no LLM_PRICES here). */
const { costUsd } = priceTableWith();

const HOUR_MS = 3_600_000;

/** A priced ledger line of `ownerId`'s (a tool call of a turn of their own). */
const line = (ownerId: string, usd: number, at = new Date()): UsageRow => ({
  event_id: randomUUID(),
  conversation_id: randomUUID(),
  version: 2,
  owner_id: ownerId,
  turn_id: randomUUID(),
  kind: 'tool_call',
  model: 'claude-sonnet-4-5',
  input_tokens: 1,
  output_tokens: 1,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  cost_usd: usd,
  batched: false,
  at,
});

/** A tenant's cap held at reservation, against real Postgres: its readers' checks serialised together. */
describe('tenant budgets', () => {
  let db: TestDatabase;
  let sut: BudgetReservations;
  let tenants: TenantBudgets;

  beforeAll(async () => {
    db = await createTestDatabase();
    sut = new BudgetReservations(db.pool);
    tenants = new TenantBudgets(db.pool);
  });
  afterAll(() => db.drop());

  const reserve = (ownerId: string, usd: number, limitUsd: number | null = null) =>
    sut.reserve({ ownerId, limitUsd, usd, ttlMs: HOUR_MS }, costUsd);
  const newTenant = async (readers: number) => {
    const tenant = `tenant-${randomUUID()}`;
    const ids = Array.from({ length: readers }, () => `reader-${randomUUID()}`);
    for (const id of ids) await tenants.noteReader(id, tenant);
    return { tenant, ids };
  };

  it('admits exactly what fits the tenant cap when 60 calls of 6 readers reserve at once', async () => {
    const { tenant, ids } = await newTenant(6);
    const outsider = `reader-${randomUUID()}`;
    await tenants.setTenantBudget(tenant, 1, 'admin');
    // 8 calls of 0.125 fit in 1; the outsider (no tenant, no budget) is held by nothing
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, (_, i) => reserve(i % 10 === 9 ? outsider : ids[i % 6], 0.125)),
    );
    const tenantOutcomes = outcomes.filter((_, i) => i % 10 !== 9);
    expect(tenantOutcomes.filter((o) => o.kind === 'reserved')).toHaveLength(8);
    expect(outcomes.filter((_, i) => i % 10 === 9).every((o) => o.kind === 'unlimited')).toBe(true);
    const { rows } = await db.pool.query(
      'SELECT coalesce(sum(usd), 0)::float8 AS usd FROM budget_reservations WHERE tenant = $1',
      [tenant],
    );
    expect(rows[0].usd).toBeCloseTo(1, 9);
    expect(tenantOutcomes.find((o) => o.kind === 'refused')).toMatchObject({
      standing: { tenant, limitUsd: 1, spentUsd: 0, reservedUsd: 1, callUsd: 0.125 },
    });
  }, 30_000);

  it("counts the tenant's readers' ledger lines this month with their reservations, and a reader's own budget too", async () => {
    const { tenant, ids } = await newTenant(2);
    const [ann, bob] = ids;
    await new UsageLedger(db.pool).record([line(ann, 0.5), line(bob, 0.25)]);
    await tenants.setTenantBudget(tenant, 1, 'admin');
    expect((await reserve(ann, 0.3)).kind).toBe('refused'); // 0.75 spent + 0.3 > 1
    expect((await reserve(bob, 0.2)).kind).toBe('reserved');
    expect((await reserve(ann, 0.1)).kind).toBe('refused'); // 0.75 + 0.2 held + 0.1 > 1

    // the budget an admin set for a reader holds over the one their token gave (limitUsd)
    await tenants.setTenantBudget(tenant, null, 'admin');
    await tenants.setReaderBudget(tenant, bob, 0.3, 'admin');
    expect((await reserve(bob, 0.1, 100)).kind).toBe('refused'); // 0.25 + 0.2 + 0.1 > 0.3
    expect((await reserve(ann, 0.1)).kind).toBe('unlimited');
    // a reader who moved to another tenant is no longer held by the budget their old admin set
    await tenants.noteReader(bob, `tenant-${randomUUID()}`);
    expect((await reserve(bob, 0.1)).kind).toBe('unlimited');
  }, 30_000);

  it("reports the tenant's usage by reader, model and day from the ledger, adding up to each reader's", async () => {
    const { tenant, ids } = await newTenant(2);
    const [ann, bob] = ids;
    const day = new Date('2026-05-04T10:00:00Z');
    await new UsageLedger(db.pool).record([
      line(ann, 0.5, day),
      line(ann, 0.25, new Date('2026-05-05T23:59:00Z')),
      line(bob, 0.125, day),
      line(`reader-${randomUUID()}`, 9, day), // not the tenant's
    ]);
    const ledger = new TenantLedger(db.pool);
    const range = { from: new Date('2026-05-01T00:00:00Z'), to: new Date('2026-06-01T00:00:00Z') };
    const cost = (rows: Array<{ key: string | null; usage: { costUsd: number } }>) =>
      Object.fromEntries(rows.map((r) => [r.key ?? 'all', r.usage.costUsd]));
    expect(cost(await ledger.usage(tenant, range, 'reader'))).toEqual({ [ann]: 0.75, [bob]: 0.125 });
    expect(cost(await ledger.usage(tenant, range, 'day'))).toEqual({ '2026-05-04': 0.625, '2026-05-05': 0.25 });
    expect(cost(await ledger.usage(tenant, range, 'model'))).toEqual({ all: 0.875 });
  }, 30_000);
});
