"use strict";
var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.BooksService = exports.MAX_TITLE_CHARS = exports.MAX_SEARCH_K = exports.DEFAULT_SEARCH_K = void 0;
const common_1 = require("@nestjs/common");
const book_errors_1 = require("./book.errors");
const book_types_1 = require("./book.types");
const chunker_1 = require("./chunking/chunker");
const parse_book_1 = require("./parsing/parse-book");
const books_repository_1 = require("./books.repository");
const query_text_1 = require("./search/query-text");
exports.DEFAULT_SEARCH_K = 5;
exports.MAX_SEARCH_K = 20;
exports.MAX_TITLE_CHARS = 200;
/** Ingest (parse → chunk → store in one transaction), list, show, delete and search books. */
let BooksService = class BooksService {
    constructor(repo) {
        this.repo = repo;
    }
    /** Parses, chunks and stores a book; a refused upload throws BookRejectedError and stores nothing. */
    async ingest(ownerId, input) {
        const title = input.title?.trim() ?? '';
        if (!title || title.length > exports.MAX_TITLE_CHARS) {
            throw new book_errors_1.BookRejectedError(400, `title must be 1..${exports.MAX_TITLE_CHARS} characters`);
        }
        const author = input.author?.trim() || null;
        if (author && author.length > exports.MAX_TITLE_CHARS)
            throw new book_errors_1.BookRejectedError(400, `author must be at most ${exports.MAX_TITLE_CHARS} characters`);
        if (!book_types_1.BOOK_FORMATS.includes(input.format)) {
            throw new book_errors_1.BookRejectedError(415, `format must be one of ${book_types_1.BOOK_FORMATS.join(', ')}`);
        }
        const parsed = await (0, parse_book_1.parseBook)(input.format, input.content, { fallbackTitle: title });
        const chunks = (0, chunker_1.chunkBook)(parsed.chapters);
        const sizeBytes = typeof input.content === 'string' ? Buffer.byteLength(input.content, 'utf8') : input.content.length;
        return this.repo.transaction((client) => this.repo.insert(client, {
            ownerId,
            title,
            author,
            format: input.format,
            chapters: parsed.chapters.map((c) => ({ index: c.index, title: c.title })),
            sizeBytes,
        }, chunks));
    }
    list(ownerId) {
        return this.repo.list(ownerId);
    }
    async get(ownerId, id) {
        const book = await this.repo.find(ownerId, id);
        if (!book)
            throw new book_errors_1.BookNotFoundError(id);
        return book;
    }
    async delete(ownerId, id) {
        if (!(await this.repo.delete(ownerId, id)))
            throw new book_errors_1.BookNotFoundError(id);
    }
    /**
     * The passages that best answer a reader's question, from chapters up to maxChapter.
     * ownerId null skips the ownership check (trusted callers such as the benchmark).
     */
    async search(ownerId, bookId, query, opts = {}) {
        if (!(await this.repo.find(ownerId, bookId)))
            throw new book_errors_1.BookNotFoundError(bookId);
        const k = Math.min(Math.max(Math.trunc(opts.k ?? exports.DEFAULT_SEARCH_K), 1), exports.MAX_SEARCH_K);
        const maxChapter = opts.maxChapter ?? null;
        const text = (0, query_text_1.queryText)(query);
        if (!text)
            return { items: [] };
        return { items: await this.repo.search(bookId, text, k, maxChapter) };
    }
};
exports.BooksService = BooksService;
exports.BooksService = BooksService = __decorate([
    (0, common_1.Injectable)(),
    __metadata("design:paramtypes", [books_repository_1.BooksRepository])
], BooksService);
//# sourceMappingURL=books.service.js.map