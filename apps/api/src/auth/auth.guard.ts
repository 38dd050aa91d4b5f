import { CanActivate, ExecutionContext, Inject, Injectable, SetMetadata, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import jwt from 'jsonwebtoken';
import { Request } from 'express';
import { AppConfig, CONFIG } from '@parley/config';

export interface AuthUser {
  id: string;
}
export type AuthedRequest = Request & { user: AuthUser };

const PUBLIC = 'parley:public';
const QUERY_TOKEN = 'parley:query-token';
/** No bearer token needed (health, docs). */
export const Public = () => SetMetadata(PUBLIC, true);
/** Also accepts ?access_token= (EventSource cannot set headers). */
export const AllowQueryToken = () => SetMetadata(QUERY_TOKEN, true);

/** Bearer JWTs, HS256 with AUTH_JWT_SECRET; `sub` is the user id; `exp` enforced. */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC, targets)) return true;
    const req = context.switchToHttp().getRequest<AuthedRequest>();
    const token =
      bearer(req) ?? (this.reflector.getAllAndOverride<boolean>(QUERY_TOKEN, targets) ? queryToken(req) : undefined);
    if (!token) throw new UnauthorizedException('a bearer token is required');
    req.user = { id: verifyToken(token, this.config.auth.jwtSecret) };
    return true;
  }
}

export function verifyToken(token: string, secret: string): string {
  try {
    const claims = jwt.verify(token, secret, { algorithms: ['HS256'] });
    const sub = typeof claims === 'object' ? claims.sub : undefined;
    if (typeof sub !== 'string' || sub.length === 0 || sub.length > 200) throw new Error('no sub');
    if (typeof claims === 'object' && claims.exp === undefined) throw new Error('no exp');
    return sub;
  } catch (e) {
    const expired = e instanceof jwt.TokenExpiredError;
    throw new UnauthorizedException(expired ? 'the token has expired' : 'the token is not valid');
  }
}

export function mintToken(userId: string, secret: string, ttlSeconds = 24 * 3600): string {
  return jwt.sign({ sub: userId }, secret, { algorithm: 'HS256', expiresIn: ttlSeconds });
}

function bearer(req: Request): string | undefined {
  const h = req.headers.authorization;
  const m = typeof h === 'string' ? /^Bearer\s+(\S+)$/i.exec(h) : null;
  return m?.[1];
}

function queryToken(req: Request): string | undefined {
  const t = req.query.access_token;
  return typeof t === 'string' && t.length > 0 ? t : undefined;
}
