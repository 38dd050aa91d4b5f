import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { UsageByModel, usageByModelOf, usageSql } from './read-model.queries';

/** How a tenant's usage is broken down besides the model: by reader, by day (UTC), or by model alone. */
export type TenantGrouping = 'reader' | 'model' | 'day';

const KEYS: Record<TenantGrouping, string> = {
  reader: 'm.user_id',
  model: 'NULL::text',
  day: `to_char(u.at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
};

/**
 * A tenant's lines of the usage ledger ($1 tenant, $2 from or null, $3 to or null): those of the
 * readers in it now, as each reader's own usage counts them (their id, or this month their
 * pseudonym once their account is erased), so a tenant's figures add up to its readers' own.
 */
export const tenantLinesSql = (grouping: TenantGrouping): string => `
     SELECT u.*, ${KEYS[grouping]} AS key
       FROM tenant_readers m
       JOIN usage_records u ON u.owner_id = m.user_id OR u.owner_key = ledger_pseudonym(m.user_id)
      WHERE m.tenant = $1
        AND ($2::timestamptz IS NULL OR u.at >= $2)
        AND ($3::timestamptz IS NULL OR u.at < $3)`;

/** A row of the tenant's usage: the usage query's figures of one model within one group (`key`: null by model alone). */
export interface TenantUsageRow {
  key: string | null;
  usage: UsageByModel;
}

/** The tenant's usage, read from the same ledger and by the same rule as each reader's (usageSql). */
@Injectable()
export class TenantLedger {
  constructor(@Inject(Pool) private readonly db: Pick<Pool, 'query'>) {}

  async usage(tenant: string, range: { from?: Date; to?: Date }, grouping: TenantGrouping): Promise<TenantUsageRow[]> {
    const { rows } = await this.db.query(usageSql(tenantLinesSql(grouping)), [
      tenant,
      range.from ?? null,
      range.to ?? null,
    ]);
    return rows.map((r) => ({ key: r.key as string | null, usage: usageByModelOf(r) }));
  }
}
