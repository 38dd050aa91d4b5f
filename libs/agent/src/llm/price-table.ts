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
  /** false: the model answers without tool use (its turns run the always-retrieve plan) */
  tools?: boolean;
}

/** Anthropic's usual 5-minute cache write and cache read, as multiples of the input price. */
export const CACHE_WRITE_FACTOR = 1.25;
export const CACHE_READ_FACTOR = 0.1;

/** The Message Batches API charges half of every price. */
export const BATCH_PRICE_FACTOR = 0.5;

/** USD rounded to a millionth of a dollar, as every recorded price is. */
export const roundUsd = (usd: number): number => Math.round(usd * 1e6) / 1e6;

/**
 * Models and their prices, looked up by exact id first, then by an explicit pattern: a key with
 * `*` (any run of characters, matched over the whole id, `ollama-*` or `*:8b`). Among patterns
 * the longest key wins. Nothing else matches: no prefix, no case folding. One instance per
 * process, built from the configuration (modelTableOf) and handed to what prices or routes calls.
 */
export class PriceTable {
  private readonly exact = new Map<string, Price>();
  private readonly patterns: Array<{ key: string; pattern: RegExp; price: Price }> = [];
  private readonly logger = new Logger('Pricing');
  private readonly warned = new Set<string>();

  constructor(entries: Iterable<readonly [string, Price]>) {
    for (const [key, price] of entries) {
      if (key.includes('*')) this.patterns.push({ key, pattern: globPattern(key), price });
      else this.exact.set(key, price);
    }
    this.patterns.sort((a, b) => b.key.length - a.key.length);
  }

  /** The model's price, or undefined for a model the table names neither exactly nor by an explicit pattern. */
  priceOf(model: string): Price | undefined {
    if (this.exact.has(model)) return this.exact.get(model);
    return this.patterns.find((p) => p.pattern.test(model))?.price;
  }

  /** The provider a model runs on, by its entry; undefined for a model the table does not name. */
  providerOf(model: string): string | undefined {
    return this.priceOf(model)?.provider;
  }

  /** false for a model whose entry says it answers without tool use. */
  toolsOf(model: string): boolean {
    return this.priceOf(model)?.tools !== false;
  }

  /**
   * Cost of a usage in USD, rounded to a millionth of a dollar. `batched`: answered through the
   * Message Batches API. A model without a price costs 0 here, and the first time the table
   * prices tokens of it a warning says so: the spend missing from usage and budgets is not silent.
   * A function of its own (`table.costUsd` may be handed on as it is, as the read models take it).
   */
  readonly costUsd = (model: string, usage: Usage, { batched = false }: { batched?: boolean } = {}): number => {
    const p = this.priceOf(model);
    if (!p) {
      if (usage.inputTokens + usage.outputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens > 0)
        this.warnUnpriced(model);
      return 0;
    }
    const perToken = (usd: number) => usd / 1_000_000;
    const cost =
      usage.inputTokens * perToken(p.input) +
      usage.cacheCreationInputTokens * perToken(p.cacheWrite ?? p.input * CACHE_WRITE_FACTOR) +
      usage.cacheReadInputTokens * perToken(p.cachedInput ?? cacheReadFallback(p)) +
      usage.outputTokens * perToken(p.output);
    return roundUsd(cost * (batched ? BATCH_PRICE_FACTOR : 1));
  };

  private warnUnpriced(model: string): void {
    if (this.warned.has(model)) return;
    this.warned.add(model);
    this.logger.warn(
      `model ${model} has no price (neither libs/agent/src/llm/pricing.ts nor LLM_PRICES names it): its calls are recorded at $0, so usage and budgets leave them out`,
    );
  }
}

/**
 * A cache read's price when the table gives none: Anthropic's 0.1× input; for another provider
 * the whole input price, since its discounts differ by model and a guess too low would hide spend.
 */
const cacheReadFallback = (p: Price): number => (p.provider === 'anthropic' ? p.input * CACHE_READ_FACTOR : p.input);

function globPattern(key: string): RegExp {
  const literal = key.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literal.join('.*')}$`);
}
