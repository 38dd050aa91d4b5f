import { AppConfig } from './app-config';
import { ConfigError, Env } from './env';

/** Dev-only secret: never accepted outside NODE_ENV=development. */
export const DEV_JWT_SECRET = 'parley-dev-secret-do-not-use-in-production';

/**
 * HS256 with AUTH_JWT_SECRET and/or the identity provider's keys at AUTH_JWKS_URL. The public dev
 * secret fills in only with NODE_ENV=development and no JWKS_URL (a provider means real users).
 */
export function authConfig(e: Env): AppConfig['auth'] {
  const jwks = e.AUTH_JWKS_URL
    ? { url: e.AUTH_JWKS_URL, issuer: e.AUTH_ISSUER, audience: e.AUTH_AUDIENCE, cooldownMs: e.AUTH_JWKS_COOLDOWN_MS }
    : undefined;
  if (!jwks && (e.AUTH_ISSUER || e.AUTH_AUDIENCE)) {
    const name = e.AUTH_ISSUER ? 'AUTH_ISSUER' : 'AUTH_AUDIENCE';
    throw new ConfigError(`Invalid environment:\n  ${name}: only checked on AUTH_JWKS_URL tokens; set AUTH_JWKS_URL`);
  }
  const jwtSecret = e.AUTH_JWT_SECRET ?? (e.NODE_ENV === 'development' && !jwks ? DEV_JWT_SECRET : undefined);
  if (!jwtSecret && !jwks) {
    throw new ConfigError(
      'Invalid environment:\n  AUTH_JWT_SECRET: required unless AUTH_JWKS_URL is set or NODE_ENV=development',
    );
  }
  return { jwtSecret, jwks };
}
