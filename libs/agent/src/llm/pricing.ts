import { Price, PriceTable } from './price-table';

const openai = (input: number, cachedInput: number, output: number): Price => ({
  provider: 'openai',
  input,
  output,
  cachedInput,
});

/**
 * OpenAI's models on the Chat Completions API, as on OpenAI's pricing page (standard tier, June
 * 2026; https://developers.openai.com/api/docs/pricing): input, cached input, output. OpenAI
 * caches prompts by itself and charges no cache writes. The GPT-5.4 and 5.5 rates are those of
 * prompts under 272k tokens (above, input costs 2×): a turn's prompt is held to its context
 * budget (AGENT_CONTEXT_TOKENS, a policy's contextBudgetTokens), far below that. Dated snapshots
 * are listed where the API names them, though Parley prices a call by the id it asked for.
 */
const OPENAI_MODELS: Array<[ids: string[], price: Price]> = [
  [['gpt-5.5'], openai(5, 0.5, 30)],
  [['gpt-5.4'], openai(2.5, 0.25, 15)],
  [['gpt-5.4-mini'], openai(0.75, 0.075, 4.5)],
  [['gpt-5.4-nano'], openai(0.2, 0.02, 1.25)],
  [['gpt-5', 'gpt-5-2025-08-07'], openai(1.25, 0.125, 10)],
  [['gpt-5-mini', 'gpt-5-mini-2025-08-07'], openai(0.25, 0.025, 2)],
  [['gpt-5-nano', 'gpt-5-nano-2025-08-07'], openai(0.05, 0.005, 0.4)],
  [['gpt-4.1', 'gpt-4.1-2025-04-14'], openai(2, 0.5, 8)],
  [['gpt-4.1-mini', 'gpt-4.1-mini-2025-04-14'], openai(0.4, 0.1, 1.6)],
  [['gpt-4.1-nano', 'gpt-4.1-nano-2025-04-14'], openai(0.1, 0.025, 0.4)],
  [['gpt-4o', 'gpt-4o-2024-08-06'], openai(2.5, 1.25, 10)],
  [['gpt-4o-mini', 'gpt-4o-mini-2024-07-18'], openai(0.15, 0.075, 0.6)],
];

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
  ...OPENAI_MODELS,
  // the scripted model the tests and the development setup answer with
  [['scripted', 'scripted-1'], { provider: 'scripted', input: 0, output: 0 }],
];

/** The shipped price table, keyed by exact model id. */
export const PRICES: ReadonlyMap<string, Price> = new Map(
  MODELS.flatMap(([ids, price]) => ids.map((id) => [id, price] as const)),
);

/**
 * The shipped table with the operator's entries (LLM_PRICES) over it: an id in both takes the
 * operator's price. Built once at boot (modelTableOf); tests, the benchmarks and the CLI build theirs.
 */
export function priceTableWith(overrides: Record<string, Price> = {}): PriceTable {
  return new PriceTable(new Map([...PRICES, ...Object.entries(overrides)]));
}
