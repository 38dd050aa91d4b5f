/** The caller, as the bearer token names them. */
export interface AuthUser {
  /** the token's `sub` */
  id: string;
  /** the token's `parley_budget_usd_per_month`, when it has one: overrides BUDGET_USD_PER_MONTH for this reader */
  budgetUsdPerMonth?: number;
  /** the token's `parley_roles`, when it names any (e.g. `operator`: the queue board; `publisher`: the catalogue) */
  roles?: string[];
  /** the token's `parley_tenant`, when it has one: the catalogue this user reads (and publishes to) */
  tenant?: string;
}
