import { Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
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
 * Resolves true when the request may go on; otherwise it has been answered.
 */
export function operatorAuth(verifier: TokenVerifier, boardPath: string) {
  const log = new Logger('QueueBoard');
  // as Express wrote them: Path, Expires (to drop it), HttpOnly, Secure behind TLS, SameSite
  const attributes = (req: FastifyRequest, expired = false) =>
    `; Path=${boardPath}${expired ? `; Expires=${new Date(1).toUTCString()}` : ''}; HttpOnly` +
    `${secure(req) ? '; Secure' : ''}; SameSite=Strict`;

  return async (req: FastifyRequest, reply: FastifyReply): Promise<boolean> => {
    const fromHeader = bearer(req);
    const fromQuery = fromHeader ? undefined : queryToken(req);
    const fromCookie = fromHeader || fromQuery ? undefined : cookie(req, BOARD_COOKIE);
    const token = fromHeader ?? fromQuery ?? fromCookie;
    try {
      if (!token) throw problem('token_missing', 'a bearer token with the operator role is required');
      const user = await verifier.verify(token);
      if (!user.roles?.includes(OPERATOR_ROLE)) {
        throw problem('operator_role_required', `the token's ${ROLES_CLAIM} claim does not hold "${OPERATOR_ROLE}"`);
      }
    } catch (e) {
      // a cookie that no longer opens the board is dropped, so the next ?access_token= starts clean
      if (fromCookie) reply.header('set-cookie', `${BOARD_COOKIE}=${attributes(req, true)}`);
      sendProblem(reply, e, log);
      return false;
    }
    if (fromQuery && req.method === 'GET') {
      reply.header('set-cookie', `${BOARD_COOKIE}=${encodeURIComponent(token!)}${attributes(req)}`);
      redirect(req, reply, withoutToken(req.url));
      return false;
    }
    return true;
  };
}

/** TLS here or, from a proxy TRUST_PROXY names, as its X-Forwarded-Proto says (Fastify's req.protocol). */
function secure(req: FastifyRequest): boolean {
  return req.protocol === 'https';
}

/** 303 with a short body in the form the client accepts (plain text unless it prefers HTML), and no validators. */
function redirect(req: FastifyRequest, reply: FastifyReply, location: string): void {
  const html = prefersHtml(req.headers.accept);
  const body = html
    ? `<p>See Other. Redirecting to ${escapeHtml(location)}</p>`
    : `See Other. Redirecting to ${location}`;
  reply.hijack();
  reply.raw.writeHead(303, {
    ...(reply.getHeaders() as Record<string, string>),
    location,
    vary: 'Accept',
    'content-type': `text/${html ? 'html' : 'plain'}; charset=utf-8`,
    'content-length': Buffer.byteLength(body),
  });
  reply.raw.end(req.method === 'HEAD' ? undefined : body);
}

function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const q = (type: string) =>
    Math.max(
      0,
      ...accept.split(',').map((part) => {
        const [range, ...params] = part.trim().toLowerCase().split(';');
        const matches = range === type || range === 'text/*' || range === '*/*';
        const qv = params.map((p) => /^\s*q=([\d.]+)/.exec(p)?.[1]).find(Boolean);
        return matches ? Number(qv ?? 1) : 0;
      }),
    );
  return q('text/html') > q('text/plain');
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function cookie(req: FastifyRequest, name: string): string | undefined {
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
