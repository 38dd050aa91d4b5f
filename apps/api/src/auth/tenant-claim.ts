import { problem } from '../http/problem.exception';

/** The claim with which an identity provider (or `npm run cli -- token`) names a user's tenant: a string. */
export const TENANT_CLAIM = 'parley_tenant';

const TENANT_MAX = 200;

/**
 * The tenant a token's payload names: undefined when the claim is absent or null (the
 * deployment's own catalogue). Anything but a string of 1..200 characters is a 401: a tenant
 * that cannot be read must not fall back to another tenant's catalogue.
 */
export function tenantClaim(payload: Record<string, unknown>): string | undefined {
  const value = payload[TENANT_CLAIM];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && value.length > 0 && value.length <= TENANT_MAX) return value;
  throw problem('token_invalid', `the token's ${TENANT_CLAIM} claim must be a string of 1 to ${TENANT_MAX} characters`);
}
