/** Problem codes a refused or failed book carries (in the HTTP error body and in a failed book's `error`). */
export type BookProblemCode =
  | 'book_invalid'
  | 'book_too_large'
  | 'book_unsupported_type'
  | 'book_no_text'
  | 'book_too_large_when_expanded'
  | 'book_too_many_pages'
  | 'book_parse_timeout'
  | 'book_parse_failed'
  | 'book_encrypted'
  | 'book_zip_bomb'
  | 'book_zip_unsafe_path'
  | 'book_xml_entities';

const DEFAULT_CODE: Record<BookRejectedError['status'], BookProblemCode> = {
  400: 'book_invalid',
  413: 'book_too_large',
  415: 'book_unsupported_type',
  422: 'book_parse_failed',
};

/** An upload the service refuses; `status` is the HTTP status it stands for. Nothing is stored. */
export class BookRejectedError extends Error {
  readonly code: BookProblemCode;

  constructor(
    readonly status: 400 | 413 | 415 | 422,
    message: string,
    code?: BookProblemCode,
  ) {
    super(message);
    this.name = 'BookRejectedError';
    this.code = code ?? DEFAULT_CODE[status];
  }
}

/** No such book for this owner (a foreign book is indistinguishable from a missing one). */
export class BookNotFoundError extends Error {
  constructor(readonly bookId: string) {
    super(`book ${bookId} not found`);
    this.name = 'BookNotFoundError';
  }
}

/** The book exists but cannot be used yet (still ingesting) or ever (its ingestion failed). */
export class BookNotReadyError extends Error {
  constructor(
    readonly bookId: string,
    readonly status: 'ingesting' | 'failed',
  ) {
    super(status === 'ingesting' ? 'the book is still being ingested' : 'the book failed to ingest');
    this.name = 'BookNotReadyError';
  }
}

/** Too many ingestions in flight (the user's or the service's); try again after `retryAfterS`. */
export class IngestBusyError extends Error {
  constructor(
    message: string,
    readonly retryAfterS: number,
  ) {
    super(message);
    this.name = 'IngestBusyError';
  }
}
