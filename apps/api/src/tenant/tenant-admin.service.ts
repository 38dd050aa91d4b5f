import { Inject, Injectable } from '@nestjs/common';
import { MODEL_TABLE, PriceTable, roundUsd } from '@parley/agent';
import {
  AdminLimits,
  Month,
  monthOf,
  ReadModelQueries,
  TenantBudgets,
  TenantLedger,
  TenantUsageRow,
  UsageByModel,
  UsageReport,
  usageReport,
} from '@parley/read-models';
import { AuthUser } from '../auth/auth-user';
import { ADMIN_ROLE } from '../auth/roles-claim';
import { problem } from '../http/problem.exception';
import { Grouping } from './tenant.dto';

export interface TenantUsage {
  tenant: string;
  groupBy: Grouping;
  from: string | null;
  to: string | null;
  total: UsageReport;
  groups: Array<UsageReport & { key: string }>;
}

export interface AdminBudget {
  tenant: string;
  monthlyUsd: number | null;
  spentUsd: number;
  leftUsd: number | null;
  periodStart: string;
  resetsAt: string;
}

/**
 * What a tenant's admin sees and sets: the tenant's usage, read from the usage ledger by the same
 * query as each reader's own, and the budgets held at the door (ReaderBudget) and before each
 * model call (BudgetReservations).
 */
@Injectable()
export class TenantAdmin {
  constructor(
    private readonly budgets: TenantBudgets,
    private readonly ledger: TenantLedger,
    private readonly queries: ReadModelQueries,
    @Inject(MODEL_TABLE) private readonly prices: PriceTable,
  ) {}

  /**
   * The tenant an admin's token administers: its parley_tenant. 403 without the admin role, and
   * for an admin token without a tenant: the deployment's own readers are the operator's (BUDGET_USD_PER_MONTH).
   */
  tenantOf(user: AuthUser): string {
    if (!user.roles?.includes(ADMIN_ROLE)) throw problem('forbidden', 'administering a tenant takes the admin role');
    if (user.tenant === undefined) throw problem('forbidden', 'an admin token must name its tenant (parley_tenant)');
    return user.tenant;
  }

  async usage(tenant: string, range: { from?: Date; to?: Date }, groupBy: Grouping): Promise<TenantUsage> {
    const rows = await this.ledger.usage(tenant, range, groupBy);
    const total = usageReport(
      rows.map((r) => r.usage),
      this.prices.costUsd,
    );
    const groups =
      groupBy === 'model'
        ? Object.entries(total.byModel).map(([model, figures]) => ({
            key: model,
            ...figures,
            byModel: { [model]: figures },
          }))
        : [...groupRows(rows)].map(([key, of]) => ({ key, ...usageReport(of, this.prices.costUsd) }));
    return {
      tenant,
      groupBy,
      from: range.from?.toISOString() ?? null,
      to: range.to?.toISOString() ?? null,
      total,
      groups: groups.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
    };
  }

  /** What the tenant admin set over a reader (the API's door and the reservations read the same). */
  limitsOf(userId: string): Promise<AdminLimits> {
    return this.budgets.limitsOf(userId);
  }

  /** The tenant's readers' spend this month, as its usage report counts it. */
  async spentUsd(tenant: string, month: Month): Promise<number> {
    return (await this.usage(tenant, { from: month.start, to: month.end }, 'model')).total.costUsd;
  }

  async tenantBudget(tenant: string, now = new Date()): Promise<AdminBudget> {
    const month = monthOf(now);
    const [limit, spent] = await Promise.all([this.budgets.tenantBudget(tenant), this.spentUsd(tenant, month)]);
    return adminBudget(tenant, limit, spent, month);
  }

  async setTenantBudget(admin: AuthUser, tenant: string, monthlyUsd: number | null): Promise<AdminBudget> {
    await this.budgets.setTenantBudget(tenant, monthlyUsd, admin.id);
    return this.tenantBudget(tenant);
  }

  /** A reader's budget as their admin set it, and their spend this month; 404 for one not in the tenant. */
  async readerBudget(tenant: string, userId: string, now = new Date()): Promise<AdminBudget & { userId: string }> {
    await this.assertReaderOf(tenant, userId);
    const month = monthOf(now);
    // the reader's own usage query (their GET /v1/usage), not the whole tenant's filtered down to them
    const [limit, usage] = await Promise.all([
      this.budgets.readerBudget(tenant, userId),
      this.queries.usage(userId, { from: month.start, to: month.end }),
    ]);
    const spent = usageReport(usage, this.prices.costUsd).costUsd;
    return { ...adminBudget(tenant, limit, spent, month), userId };
  }

  async setReaderBudget(admin: AuthUser, tenant: string, userId: string, monthlyUsd: number | null) {
    await this.assertReaderOf(tenant, userId);
    await this.budgets.setReaderBudget(tenant, userId, monthlyUsd, admin.id);
    return this.readerBudget(tenant, userId);
  }

  private async assertReaderOf(tenant: string, userId: string): Promise<void> {
    if (!(await this.budgets.isReaderOf(tenant, userId)))
      throw problem('reader_not_found', `no reader ${userId} in this tenant`);
  }
}

/** The rows' usage by group key, in the order the query gave them. */
function groupRows(rows: TenantUsageRow[]): Map<string, UsageByModel[]> {
  const groups = new Map<string, UsageByModel[]>();
  for (const { key, usage } of rows) groups.set(key ?? '', [...(groups.get(key ?? '') ?? []), usage]);
  return groups;
}

function adminBudget(tenant: string, monthlyUsd: number | null, spentUsd: number, month: Month): AdminBudget {
  return {
    tenant,
    monthlyUsd,
    spentUsd,
    leftUsd: monthlyUsd === null ? null : Math.max(0, roundUsd(monthlyUsd - spentUsd)),
    periodStart: month.start.toISOString(),
    resetsAt: month.end.toISOString(),
  };
}
