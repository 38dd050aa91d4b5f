import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { AppendNotifier } from '@parley/event-store';
import { ADMIN_LIMITS_CHANNEL, TenantBudgets } from '@parley/read-models';
import { countingPool } from '../support/counting-pool';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { waitFor } from '../support/wait-for';

/**
 * TenantBudgets keeps the limits it read until the triggers announce a change: two "processes"
 * (each its own notifier and pool) on one real database, one changing what the other keeps.
 */
describe('admin limits kept between announced changes', () => {
  let db: TestDatabase;
  const notifiers: AppendNotifier[] = [];
  const pools: Pool[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(notifiers.map((n) => n.stop()));
    await Promise.all(pools.map((p) => p.end()));
    await db.drop();
  });

  /** A process's TenantBudgets: its own pool (statements counted) and its own listening notifier. */
  async function processWith(query?: (pool: Pool) => Pool['query'], url = db.url) {
    const own = new Pool({ connectionString: url, max: 2 });
    pools.push(own);
    const counted = countingPool(own);
    if (query) counted.pool.query = query(counted.pool);
    const notifier = new AppendNotifier(url);
    notifiers.push(notifier);
    notifier.on('append', () => undefined); // something in the process listens: the connection opens
    await notifier.start();
    const budgets = new TenantBudgets(counted.pool, notifier);
    await waitFor('the admin limits to be listened for', async () => notifier.hears(ADMIN_LIMITS_CHANNEL), 5_000);
    return { budgets, notifier, statements: counted.statements };
  }

  /** Resolves when `notifier` hears `payload` announced (set it up before the change). */
  const announced = (notifier: AppendNotifier, payload: string) =>
    new Promise<void>((resolve) => {
      const heard = (channel: string, p: string) => {
        if (channel !== ADMIN_LIMITS_CHANNEL || p !== payload) return;
        notifier.off('notification', heard);
        resolve();
      };
      notifier.on('notification', heard);
    });

  const reader = () => `reader-${randomUUID()}`;
  const tenant = () => `tenant-${randomUUID()}`;

  type Process = Awaited<ReturnType<typeof processWith>>;
  /** A new reader in a new tenant, noted by `api`, once `other` has heard of it. */
  async function readerNotedBy(api: Process, other: Process) {
    const r = reader();
    const t = tenant();
    const noted = announced(other.notifier, `reader:${r}`);
    await api.budgets.noteReader(r, t);
    await noted;
    return { r, t };
  }

  it('reads a reader’s limits once, and again only after a change another process made is announced', async () => {
    const api = await processWith();
    const worker = await processWith();
    const { r, t } = await readerNotedBy(api, worker);

    expect(await worker.budgets.limitsOf(r)).toEqual({ tenant: t, tenantUsd: null, readerUsd: null });
    const read = worker.statements.length;
    for (let i = 0; i < 5; i++) await worker.budgets.limitsOf(r);
    expect(worker.statements.length).toBe(read); // kept

    await api.budgets.setReaderBudget(t, r, 7, 'admin');
    await waitFor(
      'the reader’s budget to reach the other process',
      async () => (await worker.budgets.limitsOf(r)).readerUsd === 7,
      5_000,
    );

    await api.budgets.setTenantBudget(t, 100, 'admin');
    await waitFor(
      'the tenant’s cap to reach the other process',
      async () => (await worker.budgets.limitsOf(r)).tenantUsd === 100,
      5_000,
    );

    const other = tenant();
    await api.budgets.noteReader(r, other); // their token names another tenant now: the first one's budgets no longer hold
    await waitFor(
      'the reader’s move to reach the other process',
      async () =>
        JSON.stringify(await worker.budgets.limitsOf(r)) ===
        JSON.stringify({ tenant: other, tenantUsd: null, readerUsd: null }),
      5_000,
    );
  });

  it('lets the process that made a change read it at once', async () => {
    const api = await processWith();
    const r = reader();
    const t = tenant();
    await api.budgets.noteReader(r, t);
    expect((await api.budgets.limitsOf(r)).readerUsd).toBeNull();
    await api.budgets.setReaderBudget(t, r, 3, 'admin');
    expect((await api.budgets.limitsOf(r)).readerUsd).toBe(3); // no waiting for its own announcement
    await api.budgets.setTenantBudget(t, 0, 'admin');
    expect((await api.budgets.limitsOf(r)).tenantUsd).toBe(0);
    await api.budgets.forgetReader(r);
    expect((await api.budgets.limitsOf(r)).tenant).toBeNull();
  });

  it('keeps nothing while the announcements cannot be heard, and forgets what it kept when they can again', async () => {
    const api = await processWith();
    const worker = await processWith();
    const { r, t } = await readerNotedBy(api, worker);
    await worker.budgets.limitsOf(r); // kept

    await worker.notifier.stop(); // deaf: a change now goes unheard
    expect(worker.notifier.hears(ADMIN_LIMITS_CHANNEL)).toBe(false);
    await api.budgets.setReaderBudget(t, r, 5, 'admin');
    const before = worker.statements.length;
    expect((await worker.budgets.limitsOf(r)).readerUsd).toBe(5);
    expect((await worker.budgets.limitsOf(r)).readerUsd).toBe(5);
    expect(worker.statements.length).toBe(before + 2); // read each time, nothing kept

    await worker.notifier.start();
    await waitFor('the notifier to listen again', async () => worker.notifier.hears(ADMIN_LIMITS_CHANNEL), 5_000);
    await worker.budgets.limitsOf(r);
    const kept = worker.statements.length;
    await worker.budgets.limitsOf(r);
    expect(worker.statements.length).toBe(kept);
  });

  it('does not keep a read that was under way when a change was heard', async () => {
    let holdReads: Promise<void> | undefined;
    let rowsRead = () => undefined as void;
    const worker = await processWith((pool) => {
      const query = pool.query.bind(pool) as (...a: unknown[]) => Promise<unknown>;
      return (async (...args: unknown[]) => {
        const result = await query(...args);
        rowsRead();
        await holdReads; // the rows are read, not yet handed back
        return result;
      }) as Pool['query'];
    });
    const api = await processWith();
    const { r, t } = await readerNotedBy(api, worker);

    await worker.budgets.limitsOf(reader()); // its look for the triggers made: the next read is the limits'
    let release!: () => void;
    holdReads = new Promise((resolve) => (release = resolve));
    const read = new Promise<void>((resolve) => (rowsRead = resolve));
    const stale = worker.budgets.limitsOf(r);
    await read; // "no budget", read before the change
    const heard = announced(worker.notifier, `reader:${r}`);
    await api.budgets.setReaderBudget(t, r, 9, 'admin');
    await heard;
    release();
    expect((await stale).readerUsd).toBeNull(); // the answer as read, before the change
    holdReads = undefined;
    expect((await worker.budgets.limitsOf(r)).readerUsd).toBe(9); // not kept: read again
  });

  it('keeps nothing on a database that does not announce changes (not migrated to 036)', async () => {
    const unmigrated = await createTestDatabase();
    try {
      await unmigrated.pool.query('DROP TRIGGER reader_budgets_announced ON reader_budgets');
      const worker = await processWith(undefined, unmigrated.url);
      const r = reader();
      await worker.budgets.limitsOf(r);
      const before = worker.statements.length;
      await worker.budgets.limitsOf(r);
      await worker.budgets.limitsOf(r);
      expect(worker.statements.length).toBe(before + 2); // read each time
    } finally {
      await Promise.all(notifiers.splice(-1).map((n) => n.stop()));
      await Promise.all(pools.splice(-1).map((p) => p.end()));
      await unmigrated.drop();
    }
  });
});
