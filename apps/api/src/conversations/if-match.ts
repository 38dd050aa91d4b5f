import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { Request } from 'express';
import { invalid } from '../http/problem.exception';

/** `If-Match: "7"` (also W/"7" or 7) → 7; absent → undefined; anything else → 400. */
export function parseIfMatch(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header[0] : header;
  const m = /^\s*(?:W\/)?"?(\d{1,10})"?\s*$/.exec(value ?? '');
  const n = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(n) || n > 2 ** 31 - 1) {
    throw invalid('If-Match', 'If-Match must be a stream version, e.g. "3"');
  }
  return n;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header[0] : header;
  if (!IDEMPOTENCY_KEY.test(value ?? '')) {
    throw invalid('Idempotency-Key', 'Idempotency-Key must be 1..200 visible ASCII characters');
  }
  return value;
}

/** The parsed `If-Match` header (a stream version), or undefined when absent. */
export const IfMatch = createParamDecorator((_: unknown, ctx: ExecutionContext) =>
  parseIfMatch(ctx.switchToHttp().getRequest<Request>().headers['if-match']),
);

/** The parsed `Idempotency-Key` header, or undefined when absent. */
export const IdempotencyKey = createParamDecorator((_: unknown, ctx: ExecutionContext) =>
  parseIdempotencyKey(ctx.switchToHttp().getRequest<Request>().headers['idempotency-key']),
);
