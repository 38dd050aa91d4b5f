"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.BookNotFoundError = exports.BookRejectedError = void 0;
/** An upload the service refuses; `status` is the HTTP status it stands for. Nothing is stored. */
class BookRejectedError extends Error {
    constructor(status, message) {
        super(message);
        this.status = status;
        this.name = 'BookRejectedError';
    }
}
exports.BookRejectedError = BookRejectedError;
/** No such book for this owner (a foreign book is indistinguishable from a missing one). */
class BookNotFoundError extends Error {
    constructor(bookId) {
        super(`book ${bookId} not found`);
        this.bookId = bookId;
        this.name = 'BookNotFoundError';
    }
}
exports.BookNotFoundError = BookNotFoundError;
//# sourceMappingURL=book.errors.js.map