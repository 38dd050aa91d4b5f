import {
  bookPrefix,
  chatContextRequest,
  cleanContext,
  CONTEXT_INSTRUCTIONS,
  contextRequest,
  describeEstimate,
  estimateCost,
  tokensOf,
} from './contextual-prompt';
import { priceTableWith } from '@parley/agent';
import { pool } from './book-contexts';

/** The shipped prices. */
const prices = priceTableWith();

const passages = [
  { chapter: 'Chapter 1', text: 'a'.repeat(400) },
  { chapter: 'Chapter 1', text: 'b'.repeat(400) },
  { chapter: 'Chapter 2', text: 'c'.repeat(400) },
];

describe('contextual retrieval, pure parts', () => {
  it('the book prefix keeps whole passages under their chapters, cut at what fits', () => {
    const whole = bookPrefix('A "B"', passages, 10_000);
    expect(whole.truncated).toBe(false);
    expect(whole.text).toMatch(/^<book title="A 'B'">/);
    expect(whole.text.match(/## Chapter 1/g)).toHaveLength(1);
    expect(whole.text).toContain('## Chapter 2');
    expect(whole.text.endsWith('</book>')).toBe(true);
    const cut = bookPrefix('T', passages, 250); // 1,000 characters: two passages fit
    expect(cut.truncated).toBe(true);
    expect(cut.text).toContain('b'.repeat(400));
    expect(cut.text).not.toContain('c');
  });

  it('the request: cache breakpoint on the book only, no sampling parameters', () => {
    const r = contextRequest('claude-haiku-4-5', 100, '<book/>', 'the passage');
    expect(r).not.toHaveProperty('temperature');
    expect(r).not.toHaveProperty('system');
    const [book, passage] = r.messages[0].content as { type: string; text: string; cache_control?: unknown }[];
    expect(book).toEqual({ type: 'text', text: '<book/>', cache_control: { type: 'ephemeral' } });
    expect(passage.cache_control).toBeUndefined();
    expect(passage.text).toContain('<passage>\nthe passage\n</passage>');
  });

  it('the estimate: the book written once, read n-1 times, priced by the table', () => {
    const prefix = { text: 'x'.repeat(400_000), truncated: false };
    const e = estimateCost(
      prices,
      'claude-haiku-4-5',
      prefix,
      Array.from({ length: 100 }, () => 'p'.repeat(2_000)),
    );
    expect(e.bookTokens).toBe(100_000);
    expect(e.tokens.cacheCreationInputTokens).toBe(100_000);
    expect(e.tokens.cacheReadInputTokens).toBe(99 * 100_000);
    expect(e.tokens.inputTokens).toBeGreaterThan(100 * tokensOf(2_000));
    // haiku 4: $1/M input (cache write 1.25×, read 0.1×), $5/M output
    const usd = (100_000 * 1.25 + 9_900_000 * 0.1 + e.tokens.inputTokens + e.tokens.outputTokens * 5) / 1e6;
    expect(e.usd).toBeCloseTo(usd, 5);
    expect(estimateCost(prices, 'claude-haiku-4-5', prefix, []).usd).toBe(0);
    expect(estimateCost(prices, 'unknown-model', prefix, ['p']).usd).toBe(0);
  });

  it('the Chat Completions request: the book first as the system message, the passage after, no sampling parameters', () => {
    const r = chatContextRequest('gpt-4.1-mini', 100, '<book/>', 'the passage');
    expect(r).toEqual({
      model: 'gpt-4.1-mini',
      max_completion_tokens: 100,
      messages: [
        { role: 'system', content: expect.stringMatching(/\n\n<book\/>$/) },
        { role: 'user', content: `<passage>\nthe passage\n</passage>\n\n${CONTEXT_INSTRUCTIONS}` },
      ],
    });
    // the same system message for every passage: the prefix OpenAI's cache reads
    expect(chatContextRequest('gpt-4.1-mini', 100, '<book/>', 'another').messages[0]).toEqual(r.messages[0]);
  });

  it('the estimate on OpenAI: no cache write; later requests read the whole 128-token steps of the book at the cached price', () => {
    const prefix = { text: 'x'.repeat(400_100), truncated: false }; // 100,025 tokens
    const passages = Array.from({ length: 100 }, () => 'p'.repeat(2_000));
    const e = estimateCost(prices, 'gpt-4.1-mini', prefix, passages, 'openai');
    const cached = 781 * 128; // 99,968 of the 100,025
    expect(e.bookTokens).toBe(100_025);
    expect(e.tokens.cacheCreationInputTokens).toBe(0);
    expect(e.tokens.cacheReadInputTokens).toBe(99 * cached);
    const asks = estimateCost(prices, 'gpt-4.1-mini', prefix, passages).tokens.inputTokens;
    expect(e.tokens.inputTokens).toBe(asks + 100_025 + 99 * (100_025 - cached));
    // gpt-4.1-mini: $0.40/M input, $0.10/M cached input, $1.60/M output
    const usd = (e.tokens.inputTokens * 0.4 + e.tokens.cacheReadInputTokens * 0.1 + e.tokens.outputTokens * 1.6) / 1e6;
    expect(e.usd).toBeCloseTo(usd, 5);
    expect(describeEstimate(e)).not.toContain('written to the cache');
    // a book under 1,024 tokens is never cached
    const short = estimateCost(
      prices,
      'gpt-4.1-mini',
      { text: 'x'.repeat(4_000), truncated: false },
      ['a', 'b'],
      'openai',
    );
    expect(short.tokens.cacheReadInputTokens).toBe(0);
    expect(short.tokens.inputTokens).toBe(2 * 1_000 + 2 * tokensOf(1 + CONTEXT_INSTRUCTIONS.length + 30));
  });

  it('a context is one trimmed line of bounded length', () => {
    expect(cleanContext('  In chapter 2,\n Alice   meets the cat. ')).toBe('In chapter 2, Alice meets the cat.');
    expect(cleanContext('w '.repeat(1000), 50)).toHaveLength(50);
  });

  it('pool: at most `limit` at once; after a failure nothing new starts, and it is thrown', async () => {
    let running = 0;
    let most = 0;
    const started: number[] = [];
    await expect(
      pool([1, 2, 3, 4, 5, 6], 2, async (n) => {
        started.push(n);
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        if (n === 3) throw new Error('three');
      }),
    ).rejects.toThrow('three');
    expect(most).toBe(2);
    expect(started).not.toContain(6);
  });
});
