import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import etag from 'etag';
import { STATUS_CODES } from 'node:http';
import type { FastifyReply } from 'fastify';
import { isTransientDbError, WrongExpectedVersionError } from '@parley/event-store';
import { DomainError } from '@parley/conversation';
import { BookNotFoundError, BookNotReadyError, BookRejectedError, IngestBusyError } from '@parley/books';
import { bookProblem, CODE_OF_STATUS, PROBLEM_CATALOGUE, ProblemCode, problemType } from './problem-catalogue';
import { ProblemException, ProblemExtras } from './problem.exception';
import { bearerChallenge } from '../auth/protected-resource';

/** Seconds a client waits before trying again while the database is away (a restart, a failover). */
export const DATABASE_RETRY_AFTER_S = 5;

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface Described {
  code: ProblemCode;
  detail: string;
  extras?: ProblemExtras;
}

/**
 * Every error leaves as an RFC 9457 problem (application/problem+json) with a stable `code` from
 * the catalogue, plus `statusCode`, `error` and `message` for clients written before problems.
 * Client mistakes that surface below our code (malformed JSON, oversize bodies, unknown routes)
 * keep their 4xx; only genuine faults are 500.
 */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost): void {
    sendProblem(host.switchToHttp().getResponse<FastifyReply>(), exception, this.logger);
  }
}

/** Answers `exception` as its problem; also for Fastify hooks outside Nest's filters (the queue board). */
export function sendProblem(reply: FastifyReply, exception: unknown, logger: Pick<Logger, 'warn' | 'error'>): void {
  const { code, detail, extras = {} } = describe(exception);
  const { status, title } = PROBLEM_CATALOGUE[code];
  if (status === HttpStatus.SERVICE_UNAVAILABLE) logger.warn(`${code}: ${String(exception)}`);
  else if (status >= 500) logger.error(exception instanceof Error ? exception.stack : String(exception));
  if (reply.sent || reply.raw.headersSent) {
    if (!reply.raw.writableEnded) reply.raw.end(); // a stream that had begun: nothing more can be said
    return;
  }
  if (extras.retryAfter !== undefined) reply.header('retry-after', String(extras.retryAfter));
  if (status === HttpStatus.UNAUTHORIZED) reply.header('www-authenticate', bearerChallenge(reply.request, code));
  const legacyMessage = code === 'validation_failed' && extras.errors ? extras.errors.map((e) => e.message) : detail;
  const body = {
    type: problemType(code),
    title,
    status,
    detail,
    code,
    ...extras,
    statusCode: status,
    error: STATUS_CODES[status] ?? 'Error',
    message: legacyMessage,
  };
  const json = JSON.stringify(body);
  // the weak ETag every body gets (body-headers.ts), here too for answers given outside the routes' hooks
  reply.header('etag', etag(json, { weak: true }));
  void reply.code(status).type(`${PROBLEM_CONTENT_TYPE}; charset=utf-8`).send(json);
}

const DOMAIN_CODES: Record<DomainError['code'], ProblemCode> = {
  not_found: 'conversation_not_found',
  turn_not_found: 'turn_not_found',
  already_exists: 'already_exists',
  turn_in_progress: 'turn_in_progress',
  version_not_found: 'version_not_found',
  approval_not_found: 'approval_not_found',
  approval_decided: 'approval_decided',
};

/** The problem an error is answered with over HTTP: its code, detail and extras (MCP tools report the same). */
export function describe(e: unknown): Described {
  if (e instanceof ProblemException) return { code: e.code, detail: e.detail, extras: e.extras };
  if (isTransientDbError(e)) {
    return {
      code: 'database_unavailable',
      detail: 'the database is unavailable for a moment; try again',
      extras: { retryAfter: DATABASE_RETRY_AFTER_S },
    };
  }
  if (e instanceof WrongExpectedVersionError) {
    return {
      code: 'version_conflict',
      detail: `the conversation is at version ${e.actual}, not ${String(e.expected)}`,
      extras: { currentVersion: e.actual },
    };
  }
  if (e instanceof DomainError) return { code: DOMAIN_CODES[e.code], detail: e.message };
  if (e instanceof BookNotFoundError) return { code: 'book_not_found', detail: 'book not found' };
  if (e instanceof BookRejectedError) return { code: bookProblem(e.code), detail: e.message };
  if (e instanceof BookNotReadyError) return { code: 'book_not_ready', detail: e.message };
  if (e instanceof IngestBusyError) {
    return { code: 'book_ingest_busy', detail: e.message, extras: { retryAfter: e.retryAfterS } };
  }
  if (e instanceof HttpException) return fromNestException(e);
  // errors raised below our code (body parsing, uploads) carry the status they mean
  const status = (e as { status?: number })?.status ?? (e as { statusCode?: number })?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const type = (e as { type?: string }).type;
    if (type === 'entity.parse.failed') return { code: 'malformed_json', detail: 'the request body is not valid JSON' };
    if (type === 'entity.too.large') return { code: 'payload_too_large', detail: 'the request body is too large' };
    return { code: CODE_OF_STATUS[status] ?? 'validation_failed', detail: String((e as Error).message) };
  }
  return { code: 'internal_error', detail: 'internal error' };
}

/** Nest's own exceptions (an unknown route, upload limits): the code their status stands for. */
function fromNestException(e: HttpException): Described {
  const status = e.getStatus();
  const body = e.getResponse();
  const message =
    typeof body === 'object' && body && 'message' in body ? (body as { message: unknown }).message : e.message;
  const detail = Array.isArray(message) ? message.join('; ') : String(message);
  const code = CODE_OF_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'validation_failed');
  return { code, detail };
}
