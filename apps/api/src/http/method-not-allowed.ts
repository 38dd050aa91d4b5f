import { Logger } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { sendProblem } from './http-exception.filter';
import { problem } from './problem.exception';

/** A route's path as a pattern over request paths: `:param` one segment, `*` the rest; any case, an optional trailing slash. */
function pathPattern(url: string): RegExp {
  const body = url
    .replace(/\/+$/, '')
    .split('/')
    .map((segment) => {
      if (segment === '*') return '.*';
      if (segment.startsWith(':')) return '[^/]+';
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${body}/?$`, 'i');
}

/**
 * A request to a path the API serves, with a method it does not serve there, answers 405
 * `method_not_allowed` with `Allow` listing the path's methods (RFC 9110 §15.5.6); a path nothing
 * serves stays 404. Only routes of the root scope count: the queue board and /mcp, mounted under
 * a prefix, keep their own answers (the board checks the operator first; /mcp has its 405s).
 * Call before the routes are registered.
 */
export function answerUnknownMethods(http: FastifyInstance): void {
  const routes: { pattern: RegExp; method: string }[] = [];
  const log = new Logger('http');
  http.addHook('onRoute', (route) => {
    if (route.prefix || route.url === '*' || route.url === '/*') return;
    for (const method of [route.method].flat()) routes.push({ pattern: pathPattern(route.url), method });
  });
  http.addHook('onRequest', (req, reply, done) => {
    if (!req.is404) return done();
    const path = req.url.split('?')[0] ?? '';
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    if (allowed.length === 0 || allowed.includes(req.method)) return done();
    reply.header('allow', allowed.join(', '));
    sendProblem(
      reply,
      problem('method_not_allowed', `${req.method} is not allowed here; ${path} answers ${allowed.join(', ')}`),
      log,
    );
  });
}
