import { Usage } from '@parley/conversation';
import { ReadModelQueries, UsageByModel, UsageFigures } from './read-model.queries';

export interface ModelUsage extends UsageFigures {
  cacheHitRate: number;
}

export interface UsageReport extends ModelUsage {
  byModel: Record<string, ModelUsage>;
}

/** The price of tokens of a model, as the agent's price table says (half through a provider batch). */
export type PriceOf = (model: string, usage: Usage, opts?: { batched?: boolean }) => number;

const roundUsd = (usd: number): number => Math.round(usd * 1e6) / 1e6;

/** A calendar month in UTC: [start, end), end being the next month's start. */
export interface Month {
  start: Date;
  end: Date;
}

/** The calendar month (UTC) that `now` falls in: the period of every budget. */
export function monthOf(now: Date): Month {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  // Date.UTC carries month 12 over into January of the next year
  return { start: new Date(Date.UTC(year, month, 1)), end: new Date(Date.UTC(year, month + 1, 1)) };
}

/** Where an owner stands against a monthly limit: what they spent this month (UTC), and whether it reached the limit. */
export interface MonthStanding {
  limitUsd: number;
  spentUsd: number;
  month: Month;
  spent: boolean;
}

/** The owner's spending this calendar month against `limitUsd` (a limit of 0 is spent at once). */
export async function standingThisMonth(
  queries: Pick<ReadModelQueries, 'usage'>,
  ownerId: string,
  limitUsd: number,
  price: PriceOf,
  now = new Date(),
): Promise<MonthStanding> {
  const month = monthOf(now);
  const spentUsd = usageReport(await queries.usage(ownerId, { from: month.start, to: month.end }), price).costUsd;
  return { limitUsd, spentUsd, month, spent: spentUsd >= limitUsd };
}

/**
 * The usage query's rows as a report, in all and by model. Lines recorded without a price (from
 * before calls carried theirs) are priced here by `price`, the caller's price table: the read
 * models sit beside the agent, which owns it.
 */
export function usageReport(rows: UsageByModel[], price: PriceOf): UsageReport {
  const byModel: Record<string, ModelUsage> = {};
  let total: UsageFigures = zero();
  for (const row of rows) {
    const { model, unpriced, unpricedBatched, ...figures } = row;
    const unrecorded = model ? price(model, unpriced) + price(model, unpricedBatched, { batched: true }) : 0;
    const priced = { ...figures, costUsd: roundUsd(figures.costUsd + unrecorded) };
    total = add(total, priced);
    if (model) byModel[model] = withHitRate(priced);
  }
  return { ...withHitRate(total), byModel };
}

const zero = (): UsageFigures => ({
  turns: 0,
  toolCalls: 0,
  failures: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  costUsd: 0,
});

function add(a: UsageFigures, b: UsageFigures): UsageFigures {
  const sum = zero();
  for (const k of Object.keys(sum) as Array<keyof UsageFigures>) sum[k] = a[k] + b[k];
  return { ...sum, costUsd: roundUsd(sum.costUsd) };
}

/** The share of input tokens read from the prompt cache (0 with no input). */
function withHitRate(u: UsageFigures): ModelUsage {
  const input = u.inputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens;
  return { ...u, cacheHitRate: input === 0 ? 0 : Math.round((u.cacheReadInputTokens / input) * 10_000) / 10_000 };
}
