import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { PROBLEM_CATALOGUE, ProblemCode } from '../http/problem-catalogue';
import { ProblemDto } from './problem.dto';

/** What can go wrong on any authenticated call. */
export const AUTH_PROBLEMS: readonly ProblemCode[] = [
  'token_missing',
  'token_invalid',
  'token_expired',
  'identity_provider_unavailable',
  'database_unavailable',
  'internal_error',
];
/** What can go wrong with any JSON body. */
export const BODY_PROBLEMS: readonly ProblemCode[] = ['validation_failed', 'malformed_json', 'payload_too_large'];

/**
 * Documents the problems an operation can answer: one response per status, as
 * application/problem+json whose `code` is one of the codes listed for that status.
 */
export function ApiProblems(...codes: Array<ProblemCode | readonly ProblemCode[]>): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of new Set(codes.flat())) {
    const { status } = PROBLEM_CATALOGUE[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses = [...byStatus].map(([status, list]) =>
    ApiResponse({
      status,
      description: list.map((code) => `\`${code}\`: ${PROBLEM_CATALOGUE[code].title}`).join('; '),
      headers:
        status === 402 || status === 429 || status === 503
          ? { 'Retry-After': { description: 'seconds to wait, when known', schema: { type: 'integer' } } }
          : undefined,
      content: {
        'application/problem+json': {
          schema: {
            allOf: [
              { $ref: getSchemaPath(ProblemDto) },
              { type: 'object', properties: { code: { type: 'string', enum: list } } },
            ],
          },
        },
      },
    }),
  );
  return applyDecorators(ApiExtraModels(ProblemDto), ...responses);
}
