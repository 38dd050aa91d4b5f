import type { Price } from './pricing';

/**
 * Models and their prices, looked up by exact id first, then by an explicit pattern: a key with
 * `*` (any run of characters, matched over the whole id, `ollama-*` or `*:8b`). Among patterns
 * the longest key wins. Nothing else matches: no prefix, no case folding.
 */
export class PriceTable {
  private readonly exact = new Map<string, Price>();
  private readonly patterns: Array<{ key: string; pattern: RegExp; price: Price }> = [];

  constructor(entries: Iterable<readonly [string, Price]>) {
    for (const [key, price] of entries) {
      if (key.includes('*')) this.patterns.push({ key, pattern: globPattern(key), price });
      else this.exact.set(key, price);
    }
    this.patterns.sort((a, b) => b.key.length - a.key.length);
  }

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
}

function globPattern(key: string): RegExp {
  const literal = key.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literal.join('.*')}$`);
}
