import { bookPrefix, cleanContext, contextRequest, estimateCost, tokensOf } from './contextual-prompt';
import { pool } from './book-contexts';

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
    expect(estimateCost('claude-haiku-4-5', prefix, []).usd).toBe(0);
    expect(estimateCost('unknown-model', prefix, ['p']).usd).toBe(0);
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
