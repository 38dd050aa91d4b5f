import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PROBLEM_CODES } from '../http/problem-catalogue';

export class FieldErrorDto {
  @ApiProperty({ description: 'a body path (e.g. `content`), a query parameter or a header name' }) field!: string;
  @ApiProperty() message!: string;
}

/** An error as served: RFC 9457 problem details plus Parley's stable `code` (docs/errors.md). */
export class ProblemDto {
  @ApiProperty({ description: 'URI of the problem kind: /problems/{code}, served by the API' }) type!: string;
  @ApiProperty({ description: 'short, the same for every problem of this kind' }) title!: string;
  @ApiProperty({ description: 'the HTTP status' }) status!: number;
  @ApiProperty({ description: 'what went wrong this time, for people' }) detail!: string;
  @ApiProperty({ enum: PROBLEM_CODES, enumName: 'ProblemCode', description: 'stable: branch on it' }) code!: string;
  @ApiPropertyOptional({ type: [FieldErrorDto], description: 'validation_failed: each invalid field and why' })
  errors?: FieldErrorDto[];
  @ApiPropertyOptional({ description: 'version_conflict: the version the conversation is at' })
  currentVersion?: number;
  @ApiPropertyOptional({
    description: 'rate_limited, book_ingest_busy, database_unavailable, budget_exceeded: seconds to wait',
  })
  retryAfter?: number;
  @ApiPropertyOptional({ description: "budget_exceeded: the reader's budget for a calendar month (UTC), in USD" })
  budgetUsd?: number;
  @ApiPropertyOptional({ description: 'budget_exceeded: what the reader has spent this month, in USD' })
  spentUsd?: number;
  @ApiPropertyOptional({ format: 'date-time', description: 'budget_exceeded: the start of next month (UTC)' })
  resetsAt?: string;
  @ApiPropertyOptional({
    description:
      "budget_exceeded: the tenant whose cap on its readers together is spent (else the reader's own budget)",
  })
  tenant?: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', enum: ['ok', 'down', 'hybrid', 'lexical'] },
    description: 'not_ready: each dependency and whether it answers (search: hybrid or lexical, as in /readyz)',
  })
  checks?: Record<string, string>;
  @ApiProperty({ description: 'the HTTP status again, for clients written before problem details' })
  statusCode!: number;
  @ApiProperty({ description: 'the status phrase, for clients written before problem details' }) error!: string;
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    description:
      'detail (for validation_failed, the list of field messages), for clients written before problem details',
  })
  message!: string | string[];
}
