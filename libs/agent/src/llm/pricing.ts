import { Logger } from '@nestjs/common';
import { Usage } from '@parley/conversation';

/**
 * A model's list price in USD per million tokens. `cacheWrite` (a 5-minute cache write) and
 * `cachedInput` (a cache read) are given where the provider does not charge the usual
 * multiples of `input`: 1.25× for a write, 0.1× for a read.
 */
export interface Price {
  provider: string;
  input: number;
  output: number;
  cacheWrite?: number;
  cachedInput?: number;
}

/** Anthropic's usual 5-minute cache write and cache read, as multiples of the input price. */
export const CACHE_WRITE_FACTOR = 1.25;
export const CACHE_READ_FACTOR = 0.1;

const anthropic = (input: number, output: number, cache: Pick<Price, 'cacheWrite' | 'cachedInput'> = {}): Price => ({
  provider: 'anthropic',
  input,
  output,
  ...cache,
});

/**
 * Every id a model answers to, with its price: the pinned id, and for models before the 4.6
 * generation the dated snapshot and the alias that points at it (the Messages API answers
 * with the snapshot when asked by alias). Ids are matched whole: an id missing here is
 * unknown, however much it looks like one that is here. Prices as on Anthropic's pricing page,
 * November 2026 (https://platform.claude.com/docs/en/about-claude/pricing).
 */
const MODELS: Array<[ids: string[], price: Price]> = [
  [['claude-fable-5-1'], anthropic(10, 50, { cachedInput: 0.25 })],
  [['claude-fable-5'], anthropic(10, 50, { cachedInput: 1 })],
  // Opus 5.5 reads its cache at 0.05× input
  [['claude-opus-5-5'], anthropic(4, 20, { cachedInput: 0.2 })],
  [['claude-opus-5'], anthropic(5, 25)],
  [['claude-opus-4-8'], anthropic(5, 25)],
  [['claude-opus-4-7'], anthropic(5, 25)],
  [['claude-opus-4-6'], anthropic(5, 25)],
  [['claude-opus-4-5-20251101', 'claude-opus-4-5'], anthropic(5, 25)],
  [['claude-opus-4-1-20250805', 'claude-opus-4-1'], anthropic(15, 75)],
  [['claude-opus-4-20250514', 'claude-opus-4-0'], anthropic(15, 75)],
  // Sonnet 5.5's cache reads were cut from 0.1× to 0.05× input on 2026-10-07
  [['claude-sonnet-5-5'], anthropic(2, 10, { cachedInput: 0.1 })],
  [['claude-sonnet-5'], anthropic(2, 10)],
  [['claude-sonnet-4-6'], anthropic(3, 15)],
  [['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'], anthropic(3, 15)],
  [['claude-sonnet-4-20250514', 'claude-sonnet-4-0'], anthropic(3, 15)],
  [['claude-3-7-sonnet-20250219', 'claude-3-7-sonnet-latest'], anthropic(3, 15)],
  // Haiku 5.5 is left out: it costs 5× more for a request whose prompt passes 100k tokens, and a
  // turn's usage is summed over its calls, so no single price here would be right.
  [['claude-haiku-4-5-20251001', 'claude-haiku-4-5'], anthropic(1, 5)],
  [['claude-3-5-haiku-20241022', 'claude-3-5-haiku-latest'], anthropic(0.8, 4)],
  [['claude-3-haiku-20240307'], anthropic(0.25, 1.25, { cacheWrite: 0.3, cachedInput: 0.03 })],
  // the scripted model the tests and the development setup answer with
  [['scripted', 'scripted-1'], { provider: 'scripted', input: 0, output: 0 }],
];

/** The shipped price table, keyed by exact model id. */
export const PRICES: ReadonlyMap<string, Price> = new Map(
  MODELS.flatMap(([ids, price]) => ids.map((id) => [id, price] as const)),
);

/** The model's price, or undefined for a model the table does not name exactly. */
export function priceOf(model: string): Price | undefined {
  return PRICES.get(model);
}

/** USD rounded to a millionth of a dollar, as every recorded price is. */
export const roundUsd = (usd: number): number => Math.round(usd * 1e6) / 1e6;

/** The Message Batches API charges half of every price above. */
export const BATCH_PRICE_FACTOR = 0.5;

const logger = new Logger('Pricing');
const warned = new Set<string>();

/**
 * Cost of a usage in USD, rounded to a millionth of a dollar. `batched`: answered through the
 * Message Batches API. A model without a price costs 0 here, and the first time a process
 * prices tokens of it a warning says so: the spend missing from usage and budgets is not silent.
 */
export function costUsd(model: string, usage: Usage, { batched = false } = {}): number {
  const p = priceOf(model);
  if (!p) {
    if (usage.inputTokens + usage.outputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens > 0)
      warnUnpriced(model);
    return 0;
  }
  const perToken = (usd: number) => usd / 1_000_000;
  const cost =
    usage.inputTokens * perToken(p.input) +
    usage.cacheCreationInputTokens * perToken(p.cacheWrite ?? p.input * CACHE_WRITE_FACTOR) +
    usage.cacheReadInputTokens * perToken(p.cachedInput ?? p.input * CACHE_READ_FACTOR) +
    usage.outputTokens * perToken(p.output);
  return roundUsd(cost * (batched ? BATCH_PRICE_FACTOR : 1));
}

function warnUnpriced(model: string): void {
  if (warned.has(model)) return;
  warned.add(model);
  logger.warn(
    `model ${model} has no price (libs/agent/src/llm/pricing.ts names models by exact id): its calls are recorded at $0, so usage and budgets leave them out`,
  );
}
