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
exports.SearchBookTool = exports.SEARCH_BOOK_DEFAULT_K = exports.SEARCH_BOOK_MAX_K = void 0;
const common_1 = require("@nestjs/common");
const book_errors_1 = require("./book.errors");
const books_service_1 = require("./books.service");
exports.SEARCH_BOOK_MAX_K = 10;
exports.SEARCH_BOOK_DEFAULT_K = 5;
const MAX_QUERY_CHARS = 500;
/**
 * `search_book {query, k?}`: full-text search over the conversation's book, limited to the
 * chapters the reader has reached. The passages come back numbered [1], [2]… with their chapter
 * (and page), and `chunks` lists the same passages in the same order: [citationStart + i] is
 * chunks[i] (citationStart defaults to 1, and is higher for a turn's later calls so numbers stay
 * unique within the turn).
 */
let SearchBookTool = class SearchBookTool {
    constructor(books) {
        this.books = books;
        this.name = 'search_book';
        this.description = 'Searches the text of the book this conversation is about and returns the best-matching passages, numbered [1], [2], … ' +
            "with their chapter (and page when known). Use it before answering anything about the book's content, and cite the passages " +
            'you rely on by their numbers, e.g. [2]. Only chapters the reader has reached are searched. Phrase the query with the ' +
            'distinctive words a passage would contain (names, places, objects), not as a yes/no question.';
        this.inputSchema = {
            type: 'object',
            properties: {
                query: {
                    type: 'string',
                    minLength: 1,
                    maxLength: MAX_QUERY_CHARS,
                    description: 'what to look for: a question or the key words of the passage',
                },
                k: {
                    type: 'integer',
                    minimum: 1,
                    maximum: exports.SEARCH_BOOK_MAX_K,
                    description: `how many passages to return (default ${exports.SEARCH_BOOK_DEFAULT_K})`,
                },
            },
            required: ['query'],
        };
    }
    availableFor(ctx) {
        return ctx.bookId !== null;
    }
    async run(input, ctx) {
        const parsed = parseInput(input);
        if (typeof parsed === 'string')
            return { isError: true, content: parsed };
        if (!ctx.bookId)
            return { isError: true, content: 'this conversation has no book to search' };
        ctx.signal?.throwIfAborted();
        let hits;
        try {
            ({ items: hits } = await this.books.search(ctx.userId, ctx.bookId, parsed.query, {
                k: parsed.k,
                maxChapter: ctx.readingPosition,
            }));
        }
        catch (e) {
            if (e instanceof book_errors_1.BookNotFoundError)
                return { isError: true, content: 'the book of this conversation no longer exists' };
            throw e;
        }
        const scope = ctx.readingPosition === null ? '' : ` in chapters 1–${ctx.readingPosition} (the reader has not read further)`;
        if (hits.length === 0) {
            return { content: `No passages matched "${parsed.query}"${scope}.`, chunks: [] };
        }
        const first = ctx.citationStart ?? 1;
        const passages = hits.map((h, i) => `[${first + i}] ${locate(h)}\n${h.text}`);
        return {
            content: `${hits.length} passage${hits.length === 1 ? '' : 's'} for "${parsed.query}"${scope}:\n\n${passages.join('\n\n')}`,
            chunks: hits.map(toCitation),
        };
    }
};
exports.SearchBookTool = SearchBookTool;
exports.SearchBookTool = SearchBookTool = __decorate([
    (0, common_1.Injectable)(),
    __metadata("design:paramtypes", [books_service_1.BooksService])
], SearchBookTool);
function locate(h) {
    return [h.chapter, h.section, h.page === null ? null : `p. ${h.page}`].filter(Boolean).join(' · ');
}
function toCitation(h) {
    return {
        chunkId: h.chunkId,
        chapter: h.chapter,
        chapterIndex: h.chapterIndex,
        section: h.section,
        page: h.page,
        score: h.score,
    };
}
/** The tool's input, or why it is not valid (the model reads the reason and may retry). */
function parseInput(input) {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
        return 'input must be an object {"query": string, "k"?: integer}';
    }
    const { query, k, ...rest } = input;
    const unknown = Object.keys(rest);
    if (unknown.length)
        return `unknown input field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`;
    if (typeof query !== 'string' || query.trim() === '')
        return 'query must be a non-empty string';
    if (query.length > MAX_QUERY_CHARS)
        return `query must be at most ${MAX_QUERY_CHARS} characters`;
    if (k !== undefined && (typeof k !== 'number' || !Number.isInteger(k) || k < 1 || k > exports.SEARCH_BOOK_MAX_K)) {
        return `k must be an integer from 1 to ${exports.SEARCH_BOOK_MAX_K}`;
    }
    return { query: query.trim(), k: k ?? exports.SEARCH_BOOK_DEFAULT_K };
}
//# sourceMappingURL=search-book.tool.js.map