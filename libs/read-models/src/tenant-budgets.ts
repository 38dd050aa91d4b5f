import { Inject, Injectable, OnModuleDestroy, Optional } from '@nestjs/common';
import { Pool } from 'pg';
import { AppendNotifier } from '@parley/event-store';
import { AdminLimitsCache } from './admin-limits-cache';

/** The limits a tenant admin set over one reader: their tenant (none: not in one), its cap and the reader's own. */
export interface AdminLimits {
  tenant: string | null;
  tenantUsd: number | null;
  readerUsd: number | null;
}

/**
 * Which tenant each reader is in, and the budgets tenant admins set (tenant_readers,
 * tenant_budgets, reader_budgets). A reader's tenant is the one their token named last; a
 * reader's budget holds only while they are in the tenant whose admin set it. With the process's
 * AppendNotifier, what limitsOf read is kept until a change is announced (AdminLimitsCache).
 */
@Injectable()
export class TenantBudgets implements OnModuleDestroy {
  private readonly cache?: AdminLimitsCache;

  constructor(
    @Inject(Pool) private readonly db: Pick<Pool, 'query'>,
    @Optional() notifier?: AppendNotifier,
  ) {
    this.cache = notifier && new AdminLimitsCache(notifier, db);
  }

  onModuleDestroy(): void {
    this.cache?.close();
  }

  /** Notes the tenant a reader's token names (the API calls it on their authenticated requests). */
  async noteReader(userId: string, tenant: string): Promise<void> {
    await this.db.query(
      `INSERT INTO tenant_readers (user_id, tenant) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET tenant = EXCLUDED.tenant, seen_at = now()`,
      [userId, tenant],
    );
    this.cache?.forgetReader(userId);
  }

  /** The reader's token names no tenant now: they are in none (an admin's budget for them stops holding). */
  async forgetReader(userId: string): Promise<void> {
    await this.db.query('DELETE FROM tenant_readers WHERE user_id = $1', [userId]);
    this.cache?.forgetReader(userId);
  }

  /** An erased account: their tenant and the budget their admin set go with their id. */
  async eraseReader(userId: string): Promise<void> {
    await this.db.query('DELETE FROM reader_budgets WHERE user_id = $1', [userId]);
    await this.forgetReader(userId);
  }

  /** Whether the reader is in the tenant (as its admin may see and cap them). */
  async isReaderOf(tenant: string, userId: string): Promise<boolean> {
    const { rowCount } = await this.db.query('SELECT 1 FROM tenant_readers WHERE user_id = $1 AND tenant = $2', [
      userId,
      tenant,
    ]);
    return (rowCount ?? 0) > 0;
  }

  /** What the tenant's admin set over the reader: kept from an earlier read while no change was announced, else one read. */
  limitsOf(userId: string): Promise<AdminLimits> {
    return this.cache ? this.cache.limitsOf(userId, () => this.readLimits(userId)) : this.readLimits(userId);
  }

  private async readLimits(userId: string): Promise<AdminLimits> {
    const { rows } = await this.db.query(ADMIN_LIMITS_SQL, [userId]);
    return { tenant: rows[0].tenant, tenantUsd: rows[0].tenant_usd, readerUsd: rows[0].reader_usd };
  }

  async tenantBudget(tenant: string): Promise<number | null> {
    const { rows } = await this.db.query('SELECT monthly_usd FROM tenant_budgets WHERE tenant = $1', [tenant]);
    return rows[0]?.monthly_usd ?? null;
  }

  /** Sets (a number) or lifts (null) the tenant's cap. */
  async setTenantBudget(tenant: string, monthlyUsd: number | null, setBy: string): Promise<void> {
    if (monthlyUsd === null) await this.db.query('DELETE FROM tenant_budgets WHERE tenant = $1', [tenant]);
    else
      await this.db.query(
        `INSERT INTO tenant_budgets (tenant, monthly_usd, set_by) VALUES ($1, $2, $3)
         ON CONFLICT (tenant) DO UPDATE SET monthly_usd = EXCLUDED.monthly_usd, set_by = EXCLUDED.set_by, set_at = now()`,
        [tenant, monthlyUsd, setBy],
      );
    this.cache?.forgetTenant(tenant);
  }

  async readerBudget(tenant: string, userId: string): Promise<number | null> {
    const { rows } = await this.db.query('SELECT monthly_usd FROM reader_budgets WHERE user_id = $1 AND tenant = $2', [
      userId,
      tenant,
    ]);
    return rows[0]?.monthly_usd ?? null;
  }

  /** Sets (a number) or lifts (null) the reader's budget, as their tenant's admin. */
  async setReaderBudget(tenant: string, userId: string, monthlyUsd: number | null, setBy: string): Promise<void> {
    if (monthlyUsd === null)
      await this.db.query('DELETE FROM reader_budgets WHERE user_id = $1 AND tenant = $2', [userId, tenant]);
    else
      await this.db.query(
        `INSERT INTO reader_budgets (user_id, tenant, monthly_usd, set_by) VALUES ($1, $2, $3, $4)
         ON CONFLICT (user_id) DO UPDATE
           SET tenant = EXCLUDED.tenant, monthly_usd = EXCLUDED.monthly_usd, set_by = EXCLUDED.set_by, set_at = now()`,
        [userId, tenant, monthlyUsd, setBy],
      );
    this.cache?.forgetReader(userId);
  }
}

/** The reader's tenant, its cap and the budget its admin set for them ($1 the reader). */
export const ADMIN_LIMITS_SQL = `
  SELECT m.tenant, tb.monthly_usd AS tenant_usd, rb.monthly_usd AS reader_usd
    FROM (SELECT $1::text AS user_id) x
    LEFT JOIN tenant_readers m ON m.user_id = x.user_id
    LEFT JOIN tenant_budgets tb ON tb.tenant = m.tenant
    LEFT JOIN reader_budgets rb ON rb.user_id = x.user_id AND rb.tenant = m.tenant`;
