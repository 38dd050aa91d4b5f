import { Usage } from '@parley/conversation';

/** USD per million tokens. Cache writes (5-minute) cost 1.25× input, cache reads 0.1× input. */
interface Price {
  input: number;
  output: number;
}

const PRICES: Array<[prefix: string, price: Price]> = [
  ['claude-opus-4-1', { input: 15, output: 75 }],
  ['claude-opus-4-0', { input: 15, output: 75 }],
  ['claude-opus', { input: 5, output: 25 }],
  ['claude-sonnet', { input: 3, output: 15 }],
  ['claude-3-7-sonnet', { input: 3, output: 15 }],
  ['claude-haiku-4', { input: 1, output: 5 }],
  ['claude-3-5-haiku', { input: 0.8, output: 4 }],
  ['claude-haiku', { input: 1, output: 5 }],
  ['scripted', { input: 0, output: 0 }],
];

export function priceOf(model: string): Price | undefined {
  return PRICES.find(([prefix]) => model.startsWith(prefix))?.[1];
}

/** USD rounded to a millionth of a dollar, as every recorded price is. */
export const roundUsd = (usd: number): number => Math.round(usd * 1e6) / 1e6;

/** The Message Batches API charges half of every price above. */
export const BATCH_PRICE_FACTOR = 0.5;

/**
 * Cost of a usage in USD, rounded to a millionth of a dollar; 0 for models not in the table.
 * `batched`: answered through the Message Batches API.
 */
export function costUsd(model: string, usage: Usage, { batched = false } = {}): number {
  const p = priceOf(model);
  if (!p) return 0;
  const perToken = (usd: number) => usd / 1_000_000;
  const cost =
    usage.inputTokens * perToken(p.input) +
    usage.cacheCreationInputTokens * perToken(p.input * 1.25) +
    usage.cacheReadInputTokens * perToken(p.input * 0.1) +
    usage.outputTokens * perToken(p.output);
  return roundUsd(cost * (batched ? BATCH_PRICE_FACTOR : 1));
}
