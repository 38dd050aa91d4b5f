import { Logger } from '@nestjs/common';
import { Usage } from '@parley/conversation';
import { BATCH_PRICE_FACTOR } from './price-table';
import { priceTableWith, PRICES } from './pricing';

/** The shipped prices alone. */
const shipped = priceTableWith();
const { costUsd } = shipped;
const priceOf = (model: string) => shipped.priceOf(model);

/** A million tokens of each kind, or only those given. */
const million = (only?: Partial<Usage>): Usage =>
  only
    ? { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, ...only }
    : { inputTokens: 1e6, outputTokens: 1e6, cacheReadInputTokens: 1e6, cacheCreationInputTokens: 1e6 };

describe('the shipped prices', () => {
  it.each([
    ['claude-opus-4-20250514', 15, 75],
    ['claude-opus-4-0', 15, 75],
    ['claude-opus-4-1-20250805', 15, 75],
    ['claude-opus-4-1', 15, 75],
    ['claude-opus-4-5-20251101', 5, 25],
    ['claude-opus-4-5', 5, 25],
    ['claude-opus-5-5', 4, 20],
    ['claude-sonnet-5-5', 2, 10],
    ['claude-sonnet-4-5', 3, 15],
    ['claude-sonnet-4-5-20250929', 3, 15],
    ['claude-sonnet-4-20250514', 3, 15],
    ['claude-3-7-sonnet-20250219', 3, 15],
    ['claude-haiku-4-5', 1, 5],
    ['claude-haiku-4-5-20251001', 1, 5],
    ['claude-3-5-haiku-latest', 0.8, 4],
    ['claude-3-haiku-20240307', 0.25, 1.25],
    ['scripted-1', 0, 0],
    ['gpt-5.5', 5, 30],
    ['gpt-5.4-mini', 0.75, 4.5],
    ['gpt-4.1', 2, 8],
    ['gpt-4o-mini-2024-07-18', 0.15, 0.6],
  ])('prices %s at %d/%d per million tokens in and out', (model, input, output) => {
    expect(priceOf(model)).toMatchObject({ input, output });
  });

  it.each([
    'claude-sonnet-4-5-evil',
    'claude-opus-4-1x',
    'claude-opus-4-20250514-extra',
    'claude-opus',
    'claude-sonnet',
    'claude-haiku-5-5',
    'Claude-Sonnet-4-5',
    ' claude-sonnet-4-5',
    'unknown-model',
    'gpt-5.5-turbo',
    'gpt-4',
    'constructor',
    '',
  ])('does not price %j: ids are matched whole', (model) => {
    expect(priceOf(model)).toBeUndefined();
  });

  it('names only models with a provider and non-negative prices', () => {
    for (const [id, p] of PRICES) {
      expect([id, p.provider]).toEqual([id, expect.stringMatching(/^(anthropic|openai|scripted)$/)]);
      for (const n of [p.input, p.output, p.cacheWrite ?? 0, p.cachedInput ?? 0]) expect(n).toBeGreaterThanOrEqual(0);
    }
  });
});

describe('PriceTable.costUsd', () => {
  it('prices cache writes at 1.25× input and cache reads at 0.1× input unless the model says otherwise', () => {
    expect(costUsd('claude-opus-4-20250514', million())).toBe(15 + 75 + 18.75 + 1.5);
    expect(costUsd('claude-sonnet-4-5', million({ cacheCreationInputTokens: 1e6 }))).toBe(3.75);
    expect(costUsd('claude-sonnet-4-5', million({ cacheReadInputTokens: 1e6 }))).toBe(0.3);
  });

  it("uses a model's own cache prices where it has them", () => {
    expect(costUsd('claude-sonnet-5-5', million())).toBe(2 + 10 + 2.5 + 0.1);
    expect(costUsd('claude-opus-5-5', million({ cacheReadInputTokens: 1e6 }))).toBe(0.2);
    expect(costUsd('claude-3-haiku-20240307', million({ cacheCreationInputTokens: 1e6 }))).toBe(0.3);
    expect(costUsd('claude-3-haiku-20240307', million({ cacheReadInputTokens: 1e6 }))).toBe(0.03);
  });

  it('charges half of every price through the Message Batches API', () => {
    const usage = {
      inputTokens: 1_000,
      outputTokens: 2_000,
      cacheReadInputTokens: 3_000,
      cacheCreationInputTokens: 4_000,
    };
    expect(BATCH_PRICE_FACTOR).toBe(0.5);
    expect(costUsd('claude-sonnet-5-5', usage, { batched: true })).toBeCloseTo(
      costUsd('claude-sonnet-5-5', usage) / 2,
      6,
    );
    expect(costUsd('claude-opus-4-1', million(), { batched: true })).toBe((15 + 75 + 18.75 + 1.5) / 2);
  });

  it('rounds to a millionth of a dollar', () => {
    expect(costUsd('claude-3-5-haiku-latest', million({ inputTokens: 1, outputTokens: 1 }))).toBe(0.000005);
  });

  describe('for a model without a price', () => {
    let warn: jest.SpyInstance;
    beforeEach(() => (warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined)));
    afterEach(() => warn.mockRestore());

    it('costs 0, and says so once per model the first time it prices tokens of it', () => {
      const { costUsd } = priceTableWith();
      expect(costUsd('claude-unpriced-once', million({ inputTokens: 0 }))).toBe(0);
      expect(warn).not.toHaveBeenCalled(); // nothing was spent
      expect(costUsd('claude-unpriced-once', million())).toBe(0);
      expect(costUsd('claude-unpriced-once', million())).toBe(0);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0][0]).toMatch(/model claude-unpriced-once has no price/);
    });

    it('does not price one that merely starts like a known id', () => {
      expect(costUsd('claude-opus-4-1x', million())).toBe(0);
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('claude-opus-4-1x'));
    });
  });
});

describe(priceTableWith.name, () => {
  it("puts the operator's prices over the shipped ones, by exact id or an explicit pattern", () => {
    const table = priceTableWith({
      'acme-chat-1': { provider: 'openai', input: 2, output: 8, cachedInput: 0.5 },
      'gpt-4.1': { provider: 'openai', input: 1, output: 4 },
      'llama*': { provider: 'openai', input: 0, output: 0 },
      'llama-70b*': { provider: 'openai', input: 0.5, output: 0.5 },
    });
    const priceOf = (model: string) => table.priceOf(model);
    expect(priceOf('acme-chat-1')).toMatchObject({ provider: 'openai', input: 2 });
    expect(priceOf('gpt-4.1')).toMatchObject({ input: 1, output: 4 });
    expect(priceOf('llama3.1:8b')).toMatchObject({ input: 0 });
    expect(priceOf('llama-70b-instruct')).toMatchObject({ input: 0.5 }); // the longer pattern wins
    expect(priceOf('acme-chat-10')).toBeUndefined();
    expect(priceOf('claude-sonnet-5-5')).toMatchObject({ provider: 'anthropic' });
  });

  it('prices cached input at its own price, and at the whole input price for an OpenAI model without one', () => {
    const { costUsd } = priceTableWith({
      'acme-chat-1': { provider: 'openai', input: 2, output: 8, cachedInput: 0.5 },
      'acme-plain': { provider: 'openai', input: 2, output: 8 },
    });
    expect(costUsd('acme-chat-1', million({ cacheReadInputTokens: 1e6 }))).toBe(0.5);
    expect(costUsd('acme-plain', million({ cacheReadInputTokens: 1e6 }))).toBe(2);
    expect(costUsd('gpt-5.5', million({ cacheReadInputTokens: 1e6 }))).toBe(0.5);
  });

  it("is the table's own: one table's operator prices are not another's", () => {
    const operator = priceTableWith({ 'acme-chat-1': { provider: 'openai', input: 2, output: 8 } });
    expect(operator.priceOf('acme-chat-1')).toMatchObject({ input: 2 });
    expect(priceTableWith().priceOf('acme-chat-1')).toBeUndefined();
    expect(shipped.priceOf('acme-chat-1')).toBeUndefined();
    expect(shipped.costUsd('acme-chat-1', million())).toBe(0);
    expect(operator.costUsd('acme-chat-1', million({ inputTokens: 1e6 }))).toBe(2);
  });
});
