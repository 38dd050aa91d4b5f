import { FakeIdp, hs256WithPublicKey, IdpKey, startFakeIdp, unsignedToken } from '../../../../test/support/fake-idp';
import { mintToken } from './auth.guard';
import { TokenVerifier } from './token-verifier';

const SECRET = 'unit-test-secret-' + 'z'.repeat(20);

describe(TokenVerifier.name, () => {
  let idp: FakeIdp;
  let rsa: IdpKey;
  let ec: IdpKey;

  beforeAll(async () => {
    idp = await startFakeIdp();
    rsa = await idp.newKey('RS256');
    ec = await idp.newKey('ES256');
  });
  afterAll(() => idp.close());

  const jwksOnly = (cooldownMs = 30_000) =>
    new TokenVerifier({ jwks: { url: idp.jwksUrl, issuer: idp.issuer, audience: idp.audience, cooldownMs } });
  const rejects401 = (p: Promise<unknown>) =>
    expect(p).rejects.toMatchObject({ code: expect.stringMatching(/^token_(invalid|expired)$/) });

  it('accepts RS256 and ES256 tokens from the key set, and the user is `sub`', async () => {
    const sut = jwksOnly();
    await expect(sut.verify(await idp.sign(rsa, { sub: 'alice' }))).resolves.toEqual({ id: 'alice' });
    await expect(sut.verify(await idp.sign(ec, { sub: 'bob' }))).resolves.toEqual({ id: 'bob' });
  });

  it('checks iss and aud when set, and only then', async () => {
    const sut = jwksOnly();
    await rejects401(sut.verify(await idp.sign(rsa, { iss: 'https://evil.example/' })));
    await rejects401(sut.verify(await idp.sign(rsa, { aud: 'another-api' })));
    const lax = new TokenVerifier({ jwks: { url: idp.jwksUrl, cooldownMs: 30_000 } });
    await expect(lax.verify(await idp.sign(rsa, { iss: 'https://other.example/', aud: 'x' }))).resolves.toEqual({
      id: 'alice',
    });
  });

  it('rejects expired, unsigned and algorithm-confused tokens', async () => {
    const sut = new TokenVerifier({
      jwtSecret: SECRET,
      jwks: { url: idp.jwksUrl, issuer: idp.issuer, audience: idp.audience, cooldownMs: 30_000 },
    });
    await expect(sut.verify(await idp.sign(rsa, { expiresIn: -60 }))).rejects.toMatchObject({
      code: 'token_expired',
      detail: 'the token has expired',
    });
    await rejects401(sut.verify(unsignedToken(idp, rsa)));
    await rejects401(sut.verify(await hs256WithPublicKey(idp, rsa)));
    await rejects401(sut.verify('not.a.jwt'));
    await rejects401(sut.verify('garbage'));
  });

  it('takes HS256 with AUTH_JWT_SECRET beside the provider, and refuses HS256 without a secret', async () => {
    const both = new TokenVerifier({ jwtSecret: SECRET, jwks: { url: idp.jwksUrl, cooldownMs: 30_000 } });
    await expect(both.verify(await mintToken('carol', SECRET))).resolves.toEqual({ id: 'carol' });
    await expect(both.verify(await idp.sign(ec, { sub: 'dave' }))).resolves.toEqual({ id: 'dave' });
    await rejects401(jwksOnly().verify(await mintToken('carol', SECRET)));
    await rejects401(new TokenVerifier({ jwtSecret: SECRET }).verify(await idp.sign(rsa)));
  });

  it('carries parley_budget_usd_per_month from HS256 and JWKS tokens, and refuses a malformed one with 401', async () => {
    const sut = new TokenVerifier({ jwtSecret: SECRET, jwks: { url: idp.jwksUrl, cooldownMs: 30_000 } });
    const hs = (claim: unknown) => mintToken('carol', SECRET, 60, { parley_budget_usd_per_month: claim });
    const rs = (claim: unknown) => idp.sign(rsa, { sub: 'dave', claims: { parley_budget_usd_per_month: claim } });
    await expect(sut.verify(await hs(2.5))).resolves.toEqual({ id: 'carol', budgetUsdPerMonth: 2.5 });
    await expect(sut.verify(await hs(0))).resolves.toEqual({ id: 'carol', budgetUsdPerMonth: 0 });
    await expect(sut.verify(await rs(40))).resolves.toEqual({ id: 'dave', budgetUsdPerMonth: 40 });
    await expect(sut.verify(await hs(null))).resolves.toEqual({ id: 'carol' }); // null: the server's budget
    for (const bad of [-1, '5', true, { usd: 5 }, [5]]) {
      await expect(sut.verify(await hs(bad))).rejects.toMatchObject({
        code: 'token_invalid',
        detail: expect.stringContaining('parley_budget_usd_per_month'),
      });
      await expect(sut.verify(await rs(bad))).rejects.toMatchObject({ code: 'token_invalid' });
    }
  });

  it('carries parley_roles from HS256 and JWKS tokens, and reads anything but an array of strings as no roles', async () => {
    const sut = new TokenVerifier({ jwtSecret: SECRET, jwks: { url: idp.jwksUrl, cooldownMs: 30_000 } });
    const hs = (claim: unknown) => mintToken('olga', SECRET, 60, { parley_roles: claim });
    await expect(sut.verify(await hs(['operator']))).resolves.toEqual({ id: 'olga', roles: ['operator'] });
    await expect(
      sut.verify(await idp.sign(rsa, { sub: 'olga', claims: { parley_roles: ['operator'] } })),
    ).resolves.toEqual({ id: 'olga', roles: ['operator'] });
    for (const none of [[], 'operator', { operator: true }, [1], null]) {
      await expect(sut.verify(await hs(none))).resolves.toEqual({ id: 'olga' });
    }
  });

  it('refetches the key set once for an unknown kid, and finds a rotated-in key', async () => {
    const sut = jwksOnly(0);
    await sut.verify(await idp.sign(rsa)); // warm
    const before = idp.fetches();
    const stranger = await idp.newKey('RS256', { publish: false });
    await rejects401(sut.verify(await idp.sign(stranger)));
    expect(idp.fetches()).toBe(before + 1);
    idp.publish(stranger);
    await expect(sut.verify(await idp.sign(stranger, { sub: 'erin' }))).resolves.toEqual({ id: 'erin' });
    expect(idp.fetches()).toBe(before + 2);
    await sut.verify(await idp.sign(stranger)); // cached now
    expect(idp.fetches()).toBe(before + 2);
  });

  it('refetches at most once per cooldown however many unknown kids arrive', async () => {
    // a cooldown long enough that a loaded CI machine signs and verifies well within it
    const sut = jwksOnly(2_000);
    await sut.verify(await idp.sign(rsa));
    const before = idp.fetches();
    const stranger = await idp.newKey('ES256', { publish: false });
    await rejects401(sut.verify(await idp.sign(stranger))); // within the cooldown of the first fetch
    expect(idp.fetches()).toBe(before);
    await new Promise((r) => setTimeout(r, 2_100));
    await Promise.all([1, 2, 3].map(async () => rejects401(sut.verify(await idp.sign(stranger)))));
    for (let i = 0; i < 3; i++) await rejects401(sut.verify(await idp.sign(stranger)));
    expect(idp.fetches()).toBe(before + 1);
  });

  it('answers 503, not 401, when the key set cannot be fetched', async () => {
    const sut = new TokenVerifier({ jwks: { url: 'http://127.0.0.1:1/jwks.json', cooldownMs: 30_000 } });
    await expect(sut.verify(await idp.sign(rsa))).rejects.toMatchObject({ code: 'identity_provider_unavailable' });
  });
});
