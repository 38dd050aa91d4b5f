import { SignJWT } from 'jose';

/**
 * An HS256 bearer token for `userId`, signed with `secret` and valid for `ttlSeconds` (negative:
 * already expired, for tests); `claims`: more of the payload, e.g. `{ parley_budget_usd_per_month: 5 }`.
 * The API verifies it with the same library (token-verifier.ts).
 */
export function mintToken(
  userId: string,
  secret: string,
  ttlSeconds = 24 * 3600,
  claims: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ...claims, sub: userId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(new TextEncoder().encode(secret));
}
