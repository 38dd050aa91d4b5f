import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid } from '../http/problem.exception';

/** The pattern the OpenAPI document states: 1..200 visible ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7e]{1,200}$';
const IDEMPOTENCY_KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);

/** `Idempotency-Key`: 1..200 visible ASCII characters; absent → undefined; anything else → 400. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header[0] : header;
  if (!IDEMPOTENCY_KEY.test(value ?? '')) {
    throw invalid('Idempotency-Key', 'Idempotency-Key must be 1..200 visible ASCII characters');
  }
  return value;
}

/** The parsed `Idempotency-Key` header, or undefined when absent. */
export const IdempotencyKey = createParamDecorator((_: unknown, ctx: ExecutionContext) =>
  parseIdempotencyKey(ctx.switchToHttp().getRequest<FastifyRequest>().headers['idempotency-key']),
);

/** The `Idempotency-Key` header in the OpenAPI document, for a route that takes @IdempotencyKey(). */
export const ApiIdempotencyKey = () =>
  ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN, minLength: 1, maxLength: 200 },
    description: 'a retry with the same key and body gets the first answer and appends nothing; another body is 422',
  });
