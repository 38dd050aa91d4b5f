/** An upload the service refuses; `status` is the HTTP status it stands for. Nothing is stored. */
export class BookRejectedError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
    this.name = 'BookRejectedError';
  }
}

/** No such book for this owner (a foreign book is indistinguishable from a missing one). */
export class BookNotFoundError extends Error {
  constructor(readonly bookId: string) {
    super(`book ${bookId} not found`);
    this.name = 'BookNotFoundError';
  }
}
