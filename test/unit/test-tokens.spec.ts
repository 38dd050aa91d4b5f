import { TokenVerifier } from '../../apps/api/src/auth/token-verifier';
import { mintToken } from '../../apps/api/src/auth/mint-token';
import { TEST_JWT_SECRET, tokenFor } from '../support/stack';

/** The suites' synchronous tokenFor makes the tokens the API's jose verifier takes, as mintToken does. */
describe('tokenFor', () => {
  const sut = new TokenVerifier({ jwtSecret: TEST_JWT_SECRET });

  it('signs tokens the API takes, with their claims, like mintToken', async () => {
    const claims = { parley_budget_usd_per_month: 2.5 };
    const expected = { id: 'ann', budgetUsdPerMonth: 2.5 };
    await expect(sut.verify(tokenFor('ann', { claims }))).resolves.toEqual(expected);
    await expect(sut.verify(await mintToken('ann', TEST_JWT_SECRET, 60, claims))).resolves.toEqual(expected);
  });

  it('makes forged and expired tokens the API refuses', async () => {
    await expect(sut.verify(tokenFor('ann', { secret: 'y'.repeat(32) }))).rejects.toMatchObject({
      code: 'token_invalid',
    });
    await expect(sut.verify(tokenFor('ann', { ttlSeconds: -60 }))).rejects.toMatchObject({ code: 'token_expired' });
    await expect(sut.verify(await mintToken('ann', TEST_JWT_SECRET, -60))).rejects.toMatchObject({
      code: 'token_expired',
    });
  });
});
