import { VerifiedTokens } from './verified-tokens';

describe(VerifiedTokens.name, () => {
  const t0 = 1_800_000_000_000;

  it('gives a verified token back until it expires, never after', () => {
    const sut = new VerifiedTokens<string>(60_000);
    sut.remember('a', 'alice', t0 / 1000 + 10, t0);
    expect(sut.get('a', t0 + 9_999)).toBe('alice');
    expect(sut.get('a', t0 + 10_000)).toBeUndefined();
    expect(sut.get('b', t0)).toBeUndefined();
  });

  it('keeps a long-lived token no longer than its maximum age', () => {
    const sut = new VerifiedTokens<string>(60_000);
    sut.remember('a', 'alice', t0 / 1000 + 86_400, t0);
    expect(sut.get('a', t0 + 59_999)).toBe('alice');
    expect(sut.get('a', t0 + 60_000)).toBeUndefined();
  });

  it('keeps nothing of a token already expired, and drops the oldest past its capacity', () => {
    const sut = new VerifiedTokens<string>(60_000, 2);
    sut.remember('old', 'x', t0 / 1000 - 1, t0);
    expect(sut.get('old', t0)).toBeUndefined();
    for (const t of ['a', 'b', 'c']) sut.remember(t, t, t0 / 1000 + 30, t0);
    expect([sut.get('a', t0), sut.get('b', t0), sut.get('c', t0)]).toEqual([undefined, 'b', 'c']);
  });
});
