import { Inject, Injectable, Optional } from '@nestjs/common';
import { roundUsd } from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { AuthUser } from '../auth/auth-user';
import { problem } from '../http/problem.exception';
import { MetricsService } from '../metrics/metrics.service';
import { Month, monthOf } from '@parley/read-models';
import { TenantAdmin } from '../tenant/tenant-admin.service';
import { UsageService } from './usage.service';

/** Where a reader stands this month, as GET /v1/usage shows it (`budget`). */
export interface BudgetStanding {
  /** null: no budget */
  limitUsd: number | null;
  spentUsd: number;
  /** what may still be spent (0 once spent or over); null with no budget */
  leftUsd: number | null;
  periodStart: string;
  resetsAt: string;
}

export type BudgetDecision =
  { allowed: true } | { allowed: false; budgetUsd: number; spentUsd: number; resetsAt: string; retryAfter: number };

export function standing(limitUsd: number | null, spentUsd: number, month: Month): BudgetStanding {
  return {
    limitUsd,
    spentUsd,
    leftUsd: limitUsd === null ? null : Math.max(0, roundUsd(limitUsd - spentUsd)),
    periodStart: month.start.toISOString(),
    resetsAt: month.end.toISOString(),
  };
}

/**
 * Whether a reader who has spent `spentUsd` this month may start more turns: not once the spend
 * has reached the limit (a limit of 0 refuses every post). A turn already running is not stopped,
 * so a month may end a little over.
 */
export function budgetDecision(limitUsd: number | null, spentUsd: number, now: Date): BudgetDecision {
  if (limitUsd === null || spentUsd < limitUsd) return { allowed: true };
  const { end } = monthOf(now);
  return {
    allowed: false,
    budgetUsd: limitUsd,
    spentUsd,
    resetsAt: end.toISOString(),
    retryAfter: Math.max(1, Math.ceil((end.getTime() - now.getTime()) / 1000)),
  };
}

/**
 * Each reader's monthly budget: the one their tenant's admin set, else the token's
 * parley_budget_usd_per_month, else BUDGET_USD_PER_MONTH; and their tenant's cap, when its admin
 * set one, on all its readers together. What was spent is the usage read model's cost for the
 * month (UsageService, TenantAdmin), so it trails the log by the projector's moment.
 */
@Injectable()
export class ReaderBudget {
  private readonly serverLimitUsd: number | null;

  constructor(
    private readonly usage: UsageService,
    private readonly tenants: TenantAdmin,
    @Inject(CONFIG) config: AppConfig,
    @Optional() private readonly metrics?: MetricsService,
  ) {
    this.serverLimitUsd = config.budgetUsdPerMonth;
  }

  /** The budget the reader's token (else the server) gives them; their admin's, when set, holds over it (limitsOf). */
  limitOf(user: AuthUser): number | null {
    return user.budgetUsdPerMonth ?? this.serverLimitUsd;
  }

  /** The budget a post, batch or upload records for the worker to hold its model calls to (none: nothing). */
  inForce(user: AuthUser): { budgetUsdPerMonth?: number } {
    const limit = this.limitOf(user);
    return limit === null ? {} : { budgetUsdPerMonth: limit };
  }

  async standing(user: AuthUser, now = new Date()): Promise<BudgetStanding> {
    const month = monthOf(now);
    const [{ readerUsd }, spent] = await Promise.all([this.limitsOf(user), this.spent(user.id, month)]);
    return standing(readerUsd, spent, month);
  }

  /**
   * 402 budget_exceeded when the reader has spent this month's budget, or their tenant's readers
   * together the tenant's cap; no usage query without a budget.
   */
  async assertWithin(user: AuthUser, now = new Date()): Promise<void> {
    const { readerUsd, tenant, tenantUsd } = await this.limitsOf(user);
    if (readerUsd !== null) this.refuseUnless(budgetDecision(readerUsd, await this.spent(user.id, monthOf(now)), now));
    if (tenant !== null && tenantUsd !== null) {
      const spent = await this.tenants.spentUsd(tenant, monthOf(now));
      this.refuseUnless(budgetDecision(tenantUsd, spent, now), tenant);
    }
  }

  /** The reader's budget in force (their admin's over their token's) and their tenant's cap. */
  private async limitsOf(
    user: AuthUser,
  ): Promise<{ readerUsd: number | null; tenant: string | null; tenantUsd: number | null }> {
    const admin = await this.tenants.limitsOf(user.id);
    return { readerUsd: admin.readerUsd ?? this.limitOf(user), tenant: admin.tenant, tenantUsd: admin.tenantUsd };
  }

  private refuseUnless(decision: BudgetDecision, tenant?: string): void {
    if (decision.allowed) return;
    const { allowed: _, ...extras } = decision;
    this.metrics?.postsBudgetRefused.inc();
    const whose = tenant === undefined ? "this month's budget" : `this month's budget of tenant ${tenant}`;
    throw problem(
      'budget_exceeded',
      `${whose} of $${extras.budgetUsd} is spent ($${extras.spentUsd}); it resets at ${extras.resetsAt}`,
      tenant === undefined ? extras : { ...extras, tenant },
    );
  }

  private async spent(userId: string, month: Month): Promise<number> {
    return (await this.usage.ofOwner(userId, { from: month.start, to: month.end })).costUsd;
  }
}
