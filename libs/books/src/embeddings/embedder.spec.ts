import { batches, createEmbedder, OpenAiEmbedder, retryAfterMs, VoyageEmbedder } from './embedder';

describe('embedder', () => {
  it('batches by inputs and by estimated tokens, in order', () => {
    const texts = Array.from({ length: 7 }, (_, i) => `t${i}`);
    expect(batches(texts, 3, 1_000).map((b) => b.length)).toEqual([3, 3, 1]);
    const long = ['x'.repeat(400), 'y'.repeat(400), 'z'.repeat(400)]; // 101 tokens each
    expect(batches(long, 100, 250).map((b) => b.length)).toEqual([2, 1]);
    expect(batches(['x'.repeat(4_000)], 10, 100)).toHaveLength(1); // one too long still goes alone
    expect(batches([], 3, 100)).toEqual([]);
  });

  it('reads Retry-After as seconds or a date', () => {
    expect(retryAfterMs('2')).toBe(2_000);
    expect(retryAfterMs(null)).toBeNull();
    expect(retryAfterMs('soon')).toBeNull();
    const at = retryAfterMs(new Date(Date.now() + 5_000).toUTCString())!;
    expect(at).toBeGreaterThan(3_000);
    expect(at).toBeLessThanOrEqual(5_000);
  });

  it('is built from the configuration: none, voyage or openai', () => {
    const base = { model: 'm', dimensions: null, batchSize: 8, timeoutMs: 1_000, maxRetries: 0 };
    expect(createEmbedder({ ...base, provider: 'none' })).toBeNull();
    expect(createEmbedder(null)).toBeNull();
    expect(createEmbedder({ ...base, provider: 'voyage', apiKey: 'k' })).toBeInstanceOf(VoyageEmbedder);
    const openai = createEmbedder({ ...base, provider: 'openai', baseUrl: 'http://h:1' })!;
    expect(openai).toBeInstanceOf(OpenAiEmbedder);
    expect([openai.model, openai.dimensions]).toEqual(['m', null]);
  });
});
