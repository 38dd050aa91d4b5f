import { Logger } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { bearer, queryToken } from '../auth/auth.guard';
import { OPERATOR_ROLE, ROLES_CLAIM } from '../auth/roles-claim';
import { TokenVerifier } from '../auth/token-verifier';
import { sendProblem } from '../http/http-exception.filter';
import { problem } from '../http/problem.exception';

/** Holds the operator's token for the board's own requests (its page and scripts cannot set a header). */
export const BOARD_COOKIE = 'parley_queue_board';

/**
 * Lets through only a token whose `parley_roles` holds `operator` (401 without a valid token, 403
 * without the role), from `Authorization: Bearer`, `?access_token=` or the board's cookie. A page
 * load with `?access_token=` moves the token into an HttpOnly, SameSite=Strict cookie scoped to the
 * board's path and redirects to the same URL without it, so the token leaves the address bar and history.
 */
export function operatorAuth(verifier: TokenVerifier, boardPath: string): RequestHandler {
  const log = new Logger('QueueBoard');
  const cookieOptions = (req: Request) =>
    ({ path: boardPath, httpOnly: true, sameSite: 'strict', secure: req.secure }) as const;

  return (req: Request, res: Response, next: NextFunction) => {
    const fromHeader = bearer(req);
    const fromQuery = fromHeader ? undefined : queryToken(req);
    const fromCookie = fromHeader || fromQuery ? undefined : cookie(req, BOARD_COOKIE);
    const token = fromHeader ?? fromQuery ?? fromCookie;
    const check = async () => {
      if (!token) throw problem('token_missing', 'a bearer token with the operator role is required');
      const user = await verifier.verify(token);
      if (!user.roles?.includes(OPERATOR_ROLE)) {
        throw problem('operator_role_required', `the token's ${ROLES_CLAIM} claim does not hold "${OPERATOR_ROLE}"`);
      }
      if (fromQuery && req.method === 'GET') {
        res.cookie(BOARD_COOKIE, token, cookieOptions(req));
        res.redirect(303, withoutToken(req.originalUrl));
        return;
      }
      next();
    };
    check().catch((e: unknown) => {
      // a cookie that no longer opens the board is dropped, so the next ?access_token= starts clean
      if (fromCookie) res.clearCookie(BOARD_COOKIE, cookieOptions(req));
      sendProblem(res, e, log);
    });
  };
}

function cookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim()) || undefined;
  }
  return undefined;
}

function withoutToken(originalUrl: string): string {
  const url = new URL(originalUrl, 'http://board.invalid');
  url.searchParams.delete('access_token');
  return url.pathname + url.search;
}
