import { TENANT_CLAIM, tenantClaim } from './tenant-claim';

describe('tenantClaim', () => {
  it('reads a tenant, and none when the claim is absent or null', () => {
    expect(tenantClaim({ [TENANT_CLAIM]: 'acme-press' })).toBe('acme-press');
    expect(tenantClaim({})).toBeUndefined();
    expect(tenantClaim({ [TENANT_CLAIM]: null })).toBeUndefined();
  });

  it.each([[''], [42], [['acme']], ['x'.repeat(201)]])(
    'refuses %p as a 401 rather than fall back to no tenant',
    (v) => {
      expect(() => tenantClaim({ [TENANT_CLAIM]: v })).toThrow(/parley_tenant/);
    },
  );
});
