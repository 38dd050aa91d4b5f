import { retryDelayMs } from './retry-delay';

describe(retryDelayMs.name, () => {
  const config = { retryBaseMs: 1_000, retryMaxMs: 10_000 };

  it('doubles from the base after each failed try, up to the max', () => {
    const middle = () => 0.5; // no jitter
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n, config, middle))).toEqual([
      1_000, 2_000, 4_000, 8_000, 10_000, 10_000,
    ]);
  });

  it('spreads retries by ±20 %', () => {
    expect(retryDelayMs(2, config, () => 0)).toBe(1_600);
    expect(retryDelayMs(2, config, () => 1)).toBe(2_400);
  });
});
