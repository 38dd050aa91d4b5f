import { Logger, Provider } from '@nestjs/common';
import { createSecretKey, KeyObject } from 'node:crypto';
import { problem } from '../http/problem.exception';
import { createRemoteJWKSet, decodeProtectedHeader, errors, JWTPayload, JWTVerifyGetKey, jwtVerify } from 'jose';
import { AppConfig, CONFIG } from '@parley/config';
import { AuthUser } from './auth-user';
import { budgetClaim } from './budget-claim';
import { rolesClaim } from './roles-claim';
import { tenantClaim } from './tenant-claim';
import { VerifiedTokens } from './verified-tokens';

/** What an identity provider may sign with; `none` and the HMAC family never come from its keys. */
export const JWKS_ALGORITHMS = ['RS256', 'ES256'];

/**
 * Turns a bearer token into its user (`sub`, and the budget claim when set), or throws 401 (503 when the provider's keys cannot
 * be fetched: the token may be fine). Two kinds of token, told apart by the header's `alg`:
 *
 * - HS256, signed with AUTH_JWT_SECRET (laptops, tests, `npm run cli -- token`), when a secret is set;
 * - RS256/ES256 from the identity provider, verified against its JWKS (AUTH_JWKS_URL), with `iss`
 *   and `aud` checked when AUTH_ISSUER / AUTH_AUDIENCE are set. The key set is cached (10 min) and
 *   refetched when a token names a `kid` it lacks (key rotation), at most once per cooldown.
 *
 * Every token needs `exp` and a `sub` of 1..200 characters; `parley_budget_usd_per_month`, when
 * present, must be a number ≥ 0 (see budgetClaim); `parley_roles`, an array of strings, is carried
 * when it names any (see rolesClaim); `parley_tenant`, when present, a string (see tenantClaim).
 *
 * One per process (tokenVerifierProvider): the guard, the check before the body, the MCP endpoint
 * and the queue board share it, so a token verified by one is known to the others.
 */
export class TokenVerifier {
  /** imported once: jose would otherwise import the secret's bytes as a key on every verification */
  private readonly secret?: KeyObject;
  private readonly jwks?: JWTVerifyGetKey;
  private readonly log = new Logger('Auth');
  private readonly verified = new VerifiedTokens<AuthUser>();

  constructor(private readonly auth: AppConfig['auth']) {
    if (auth.jwtSecret) this.secret = createSecretKey(Buffer.from(auth.jwtSecret, 'utf8'));
    if (auth.jwks) {
      const remote = createRemoteJWKSet(new URL(auth.jwks.url), {
        cooldownDuration: auth.jwks.cooldownMs,
        timeoutDuration: 5_000,
      });
      this.jwks = async (header, token) => {
        try {
          return await remote(header, token);
        } catch (e) {
          if (e instanceof errors.JWKSNoMatchingKey || e instanceof errors.JWKSMultipleMatchingKeys) throw e;
          throw new KeysUnavailable(e); // refused, timed out, not 200, not a key set
        }
      };
    }
  }

  async verify(token: string): Promise<AuthUser> {
    const known = this.verified.get(token);
    if (known) return known;
    let payload: JWTPayload;
    try {
      payload = await this.verifyClaims(token);
    } catch (e) {
      if (e instanceof KeysUnavailable) {
        this.log.warn(`JWKS ${this.auth.jwks?.url} cannot be fetched: ${String(e.cause)}`);
        throw problem('identity_provider_unavailable', 'the identity provider keys cannot be fetched');
      }
      throw e instanceof errors.JWTExpired
        ? problem('token_expired', 'the token has expired')
        : problem('token_invalid', 'the token is not valid');
    }
    const sub = payload.sub;
    if (typeof sub !== 'string' || sub.length === 0 || sub.length > 200) {
      throw problem('token_invalid', 'the token is not valid');
    }
    const budgetUsdPerMonth = budgetClaim(payload);
    const roles = rolesClaim(payload);
    const tenant = tenantClaim(payload);
    const user: AuthUser = {
      id: sub,
      ...(budgetUsdPerMonth === undefined ? {} : { budgetUsdPerMonth }),
      ...(roles.length > 0 ? { roles } : {}),
      ...(tenant === undefined ? {} : { tenant }),
    };
    // shared by every request carrying this token until it is dropped: nobody may change it
    this.verified.remember(token, Object.freeze(user), payload.exp!); // exp is a required claim
    return user;
  }

  private async verifyClaims(token: string): Promise<JWTPayload> {
    const { alg } = decodeProtectedHeader(token);
    if (alg === 'HS256' && this.secret) {
      return (await jwtVerify(token, this.secret, { algorithms: ['HS256'], requiredClaims: ['exp', 'sub'] })).payload;
    }
    if (!this.jwks) throw new errors.JOSEAlgNotAllowed(`"alg" (Algorithm) Header Parameter value not allowed`);
    const { issuer, audience } = this.auth.jwks!;
    const { payload } = await jwtVerify(token, this.jwks, {
      algorithms: JWKS_ALGORITHMS,
      issuer,
      audience,
      requiredClaims: ['exp', 'sub'],
    });
    return payload;
  }
}

/** The API's one TokenVerifier, built from AUTH_* settings. */
export const tokenVerifierProvider: Provider = {
  provide: TokenVerifier,
  inject: [CONFIG],
  useFactory: (config: AppConfig) => new TokenVerifier(config.auth),
};

class KeysUnavailable extends Error {
  constructor(cause: unknown) {
    super('the JWKS cannot be fetched', { cause });
  }
}
