import fastifyCors from '@fastify/cors';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply } from 'fastify';
import { AppConfig } from '@parley/config';

/** The request headers a browser app sends: the token, and the headers of retries, preconditions and resumed streams. */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-Match',
  'If-None-Match',
  'Last-Event-ID',
  'traceparent',
  'tracestate',
];

/** The response headers a browser app reads (a browser hides all but the CORS-safelisted ones otherwise). */
export const CORS_EXPOSED_HEADERS = ['ETag', 'Location', 'Retry-After', 'WWW-Authenticate'];

/** How long a browser may keep a preflight's answer (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * Lets the browser apps of CORS_ORIGINS call the API (docs/cors.md), with @fastify/cors: exact
 * origins, or every origin when the operator wrote `*`; unset, nothing is registered and the API
 * answers as before (no CORS headers, preflights 404). Awaited before the auth hook is added, so
 * its onRequest hook runs first: a 401 carries the CORS headers the browser needs to show it, and a
 * preflight (no token; answered by the plugin's own OPTIONS route) is never asked for one.
 */
export async function enableCors(app: NestFastifyApplication, cors: AppConfig['cors']): Promise<void> {
  if (cors.origins.length === 0) return;
  await app.register(fastifyCors, {
    origin: cors.origins.includes('*') ? '*' : cors.origins,
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_S,
    // bearer tokens, not cookies: no credentials, so `*` stays a valid answer
    credentials: false,
  });
}

/**
 * A route that writes its raw response itself (an SSE stream, after reply.hijack()) would drop
 * the headers hooks set on the reply (CORS among them): hand them to the raw response first.
 */
export function carryReplyHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value);
  }
}

/** Hands the response to a stream that writes the raw response itself, the hooks' headers carried over. */
export function hijackForStream(reply: FastifyReply): void {
  carryReplyHeaders(reply);
  reply.hijack();
}
