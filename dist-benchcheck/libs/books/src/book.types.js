"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.MAX_BOOK_BYTES = exports.BOOK_FORMATS = void 0;
/** The formats a book may be uploaded in. */
exports.BOOK_FORMATS = ['text', 'markdown', 'pdf'];
/** The largest upload accepted, in bytes (DESIGN.md: oversize answers 413). */
exports.MAX_BOOK_BYTES = 20 * 1024 * 1024;
//# sourceMappingURL=book.types.js.map