import { problem } from '../http/problem.exception';

/** The claim with which an app gives one reader their own monthly budget in USD (docs/api.md, "Budgets"). */
export const BUDGET_CLAIM = 'parley_budget_usd_per_month';

/**
 * The budget a token's payload gives its reader: undefined when the claim is absent or null (the
 * server's budget applies). Anything but a finite number ≥ 0 is a 401: a cost bound that cannot be
 * read must not quietly fall back to a looser one.
 */
export function budgetClaim(payload: Record<string, unknown>): number | undefined {
  const value = payload[BUDGET_CLAIM];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  throw problem('token_invalid', `the token's ${BUDGET_CLAIM} claim must be a number of US dollars, 0 or more`);
}
