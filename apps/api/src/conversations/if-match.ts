import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid } from '../http/problem.exception';

/** The pattern the OpenAPI document states; versions above 2³¹−1 are refused as well. */
export const IF_MATCH_PATTERN = '^\\s*(?:W/)?"?(\\d{1,10})"?\\s*$';
const IF_MATCH = new RegExp(IF_MATCH_PATTERN);

/** `If-Match: "7"` (also W/"7" or 7) → 7; absent → undefined; anything else → 400. */
export function parseIfMatch(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header[0] : header;
  const m = IF_MATCH.exec(value ?? '');
  const n = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(n) || n > 2 ** 31 - 1) {
    throw invalid('If-Match', 'If-Match must be a stream version, e.g. "3"');
  }
  return n;
}

/** The parsed `If-Match` header (a stream version), or undefined when absent. */
export const IfMatch = createParamDecorator((_: unknown, ctx: ExecutionContext) =>
  parseIfMatch(ctx.switchToHttp().getRequest<FastifyRequest>().headers['if-match']),
);

/** The `If-Match` header in the OpenAPI document, for a route that takes @IfMatch(). */
export const ApiIfMatch = () =>
  ApiHeader({
    name: 'If-Match',
    required: false,
    schema: { type: 'string', pattern: IF_MATCH_PATTERN },
    description: 'the version you last saw, e.g. "7": 409 version_conflict when the conversation has moved on',
  });
