import { Logger } from '@nestjs/common';
import { MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { PATH_METADATA } from '@nestjs/common/constants';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { sendProblem } from '../http/http-exception.filter';
import { problem } from '../http/problem.exception';
import { AuthedRequest, bearer, IS_PUBLIC, queryToken, TAKES_QUERY_TOKEN } from './auth.guard';
import { TokenVerifier } from './token-verifier';

/** How a controller's route is let in: no token, a bearer token, or a bearer token or ?access_token=. */
export type RouteAuth = 'public' | 'bearer' | 'query';

/** The key of a route's Fastify config that holds its RouteAuth. */
const ROUTE_AUTH = 'parleyAuth';

/**
 * Checks the token of every controller route in Fastify's onRequest hook, before its body is read,
 * parsed or inflated: a request without a valid token is answered 401 (token_missing,
 * token_invalid, token_expired) from its headers alone, so an anonymous client cannot make the
 * API hold or inflate a body. Each route's rule is the AuthGuard's (`@Public()`,
 * `@AllowQueryToken()`, on the handler or its class), written into the route's Fastify config
 * before the routes are registered (call this before init). The guard then finds the user here.
 * Routes that are not controllers' (the queue board, with its own check; the OpenAPI page) and
 * unknown paths are left to themselves.
 */
export function authenticateBeforeBody(app: NestFastifyApplication): void {
  markRoutes(app);
  const verifier = app.get(TokenVerifier);
  const log = new Logger('Auth');
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', async (req, reply) => {
      const auth = routeAuth(req);
      if (auth === undefined || auth === 'public') return;
      const token = bearer(req) ?? (auth === 'query' ? queryToken(req) : undefined);
      try {
        if (!token) throw problem('token_missing', 'a bearer token is required');
        (req as AuthedRequest).user = await verifier.verify(token);
      } catch (e) {
        sendProblem(reply, e, log);
        return reply;
      }
    });
}

/** The rule Fastify carries for the route `req` was routed to (undefined: not a controller's). */
export function routeAuth(req: FastifyRequest): RouteAuth | undefined {
  if (req.is404) return undefined;
  return (req.routeOptions.config as { [ROUTE_AUTH]?: RouteAuth } | undefined)?.[ROUTE_AUTH];
}

/** Writes each controller method's rule into the Fastify route config Nest registers it with. */
function markRoutes(app: NestFastifyApplication): void {
  const reflector = app.get(Reflector);
  const scanner = new MetadataScanner();
  for (const module of app.get(ModulesContainer).values()) {
    for (const { metatype } of module.controllers.values()) {
      if (typeof metatype !== 'function') continue;
      const proto = metatype.prototype as Record<string, unknown>;
      for (const name of scanner.getAllMethodNames(proto)) {
        const handler = proto[name];
        if (typeof handler !== 'function' || !Reflect.hasMetadata(PATH_METADATA, handler)) continue;
        const targets = [handler, metatype];
        const auth: RouteAuth = reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)
          ? 'public'
          : reflector.getAllAndOverride<boolean>(TAKES_QUERY_TOKEN, targets)
            ? 'query'
            : 'bearer';
        const config = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) ?? {}) as object;
        Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...config, [ROUTE_AUTH]: auth }, handler);
      }
    }
  }
}
