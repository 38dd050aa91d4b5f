import { HttpException } from '@nestjs/common';
import { PROBLEM_CATALOGUE, ProblemCode } from './problem-catalogue';

/** One invalid input: the field (a body path, query or header name) and why. */
export interface FieldError {
  field: string;
  message: string;
}

/** Fields a problem may carry besides type, title, status, detail and code. */
export interface ProblemExtras {
  errors?: FieldError[];
  currentVersion?: number;
  retryAfter?: number;
  turnId?: string;
  checks?: Record<string, string>;
  /** budget_exceeded: the reader's monthly budget, what they spent this month, and when it starts again */
  budgetUsd?: number;
  spentUsd?: number;
  resetsAt?: string;
  /** budget_exceeded: the tenant whose cap (its readers' together) is spent, when it is the tenant's */
  tenant?: string;
}

/** An error the API answers as a problem of the catalogue; its status is the code's. */
export class ProblemException extends HttpException {
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extras: ProblemExtras = {},
  ) {
    super(detail, PROBLEM_CATALOGUE[code].status);
  }
}

export const problem = (code: ProblemCode, detail: string, extras?: ProblemExtras) =>
  new ProblemException(code, detail, extras);

/** A 400 validation_failed for one field. */
export const invalid = (field: string, message: string) =>
  problem('validation_failed', message, { errors: [{ field, message }] });
