import { CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { problem } from '../http/problem.exception';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { TenantMembers } from '../tenant/tenant-members';
import { AuthUser } from './auth-user';
import { TokenVerifier } from './token-verifier';

export type { AuthUser };
export type AuthedRequest = FastifyRequest & { user: AuthUser };

export const IS_PUBLIC = 'parley:public';
export const TAKES_QUERY_TOKEN = 'parley:query-token';
/** No bearer token needed (health, docs). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
/** Also accepts ?access_token= (EventSource cannot set headers). */
export const AllowQueryToken = () => SetMetadata(TAKES_QUERY_TOKEN, true);

/**
 * Bearer JWTs: HS256 with AUTH_JWT_SECRET and/or RS256/ES256 from the identity provider's JWKS
 * (AUTH_JWKS_URL); `sub` is the user id, `parley_budget_usd_per_month` their own budget; `exp`
 * enforced. See TokenVerifier. The token of a routed request was checked before its body was read
 * (authenticateBeforeBody): the guard takes the user found there, and checks itself otherwise.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly verifier: TokenVerifier,
    private readonly members: TenantMembers,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const req = context.switchToHttp().getRequest<AuthedRequest>();
    if (!req.user) {
      // else verified before the body was read
      const token =
        bearer(req) ??
        (this.reflector.getAllAndOverride<boolean>(TAKES_QUERY_TOKEN, targets) ? queryToken(req) : undefined);
      if (!token) throw problem('token_missing', 'a bearer token is required');
      req.user = await this.verifier.verify(token);
    }
    await this.members.note(req.user);
    return true;
  }
}

export { mintToken } from './mint-token';

export function bearer(req: Pick<FastifyRequest, 'headers'>): string | undefined {
  const h = req.headers.authorization;
  const m = typeof h === 'string' ? /^Bearer\s+(\S+)$/i.exec(h) : null;
  return m?.[1];
}

export function queryToken(req: Pick<FastifyRequest, 'query'>): string | undefined {
  const t = (req.query as Record<string, unknown> | undefined)?.access_token;
  return typeof t === 'string' && t.length > 0 ? t : undefined;
}
