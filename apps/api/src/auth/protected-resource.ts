import type { FastifyRequest } from 'fastify';
import { AppConfig } from '@parley/config';

/** Where RFC 9728 puts a protected resource's metadata, from the origin's root. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** The API's origin as the client reached it (X-Forwarded-Proto/-Host only from TRUST_PROXY's peers). */
export function originOf(req: FastifyRequest): string {
  return `${req.protocol}://${req.host}`;
}

/**
 * The RFC 9728 document: this API is the resource (every route under its origin, /mcp included)
 * and takes bearer tokens in the Authorization header; the identity provider that issues them is
 * named when it is known (AUTH_ISSUER, else the origin of AUTH_JWKS_URL). With HS256 tokens alone
 * there is none to name: the operator mints tokens.
 */
export function protectedResourceMetadata(
  req: FastifyRequest,
  auth: AppConfig['auth'],
): { resource: string; authorization_servers?: string[]; bearer_methods_supported: string[]; resource_name: string } {
  const issuer = auth.jwks?.issuer ?? (auth.jwks ? new URL(auth.jwks.url).origin : undefined);
  return {
    resource: originOf(req),
    ...(issuer ? { authorization_servers: [issuer] } : {}),
    bearer_methods_supported: ['header'],
    resource_name: 'Parley',
  };
}

/**
 * The WWW-Authenticate a 401 carries (RFC 6750, with RFC 9728's resource_metadata), so a client
 * such as an MCP client finds where a token comes from. A token that was sent and refused is
 * `invalid_token`; a missing one names no error.
 */
export function bearerChallenge(req: FastifyRequest, code: string): string {
  const error = code === 'token_missing' ? '' : ', error="invalid_token"';
  return `Bearer realm="parley"${error}, resource_metadata="${originOf(req)}${PROTECTED_RESOURCE_PATH}"`;
}
