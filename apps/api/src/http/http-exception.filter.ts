import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import { Response } from 'express';
import { isTransientDbError, WrongExpectedVersionError } from '@parley/event-store';
import { DomainError } from '@parley/conversation';

/** Seconds a client waits before trying again while the database is away (a restart, a failover). */
export const DATABASE_RETRY_AFTER_S = 5;

const DOMAIN_STATUS: Record<DomainError['code'], number> = {
  not_found: 404,
  turn_not_found: 404,
  already_exists: 409,
  turn_in_progress: 409,
};

/**
 * Every error leaves as JSON {statusCode, error, message} (and `code` where one is set). Client mistakes that surface below
 * Nest (malformed JSON, oversize bodies) keep their 4xx; only genuine faults are 500.
 */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const { status, message, retryAfter, code } = this.describe(exception);
    if (retryAfter !== undefined && !res.headersSent) res.setHeader('Retry-After', String(retryAfter));
    if (status === HttpStatus.SERVICE_UNAVAILABLE) this.logger.warn(`database unavailable: ${String(exception)}`);
    else if (status >= 500) this.logger.error(exception instanceof Error ? exception.stack : String(exception));
    if (res.headersSent) {
      res.end();
      return;
    }
    res
      .status(status)
      .json({ statusCode: status, error: STATUS_CODES[status] ?? 'Error', message, ...(code ? { code } : {}) });
  }

  private describe(e: unknown): { status: number; message: string | string[]; retryAfter?: number; code?: string } {
    if (e instanceof HttpException) {
      const body = e.getResponse();
      const message =
        typeof body === 'object' && body && 'message' in body
          ? (body as { message: string | string[] }).message
          : e.message;
      // a problem code (e.g. book_too_large_when_expanded) travels with the message when one is set
      const { retryAfter, code } = body as { retryAfter?: number; code?: string };
      return { status: e.getStatus(), message, retryAfter, code };
    }
    if (isTransientDbError(e)) {
      return {
        status: HttpStatus.SERVICE_UNAVAILABLE,
        message: 'the database is unavailable for a moment; try again',
        retryAfter: DATABASE_RETRY_AFTER_S,
      };
    }
    if (e instanceof WrongExpectedVersionError) {
      return {
        status: HttpStatus.CONFLICT,
        message: `the conversation is at version ${e.actual}, not ${String(e.expected)}`,
      };
    }
    if (e instanceof DomainError) return { status: DOMAIN_STATUS[e.code], message: e.message };
    // errors raised by body-parser and multer carry the status they mean
    const status =
      (e as { status?: number; statusCode?: number })?.status ?? (e as { statusCode?: number })?.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      const type = (e as { type?: string }).type;
      const message =
        type === 'entity.too.large'
          ? 'the request body is too large'
          : type === 'entity.parse.failed'
            ? 'the request body is not valid JSON'
            : String((e as Error).message);
      return { status, message };
    }
    return { status: HttpStatus.INTERNAL_SERVER_ERROR, message: 'internal error' };
  }
}
