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
var __param = (this && this.__param) || function (paramIndex, decorator) {
    return function (target, key) { decorator(target, key, paramIndex); }
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.BooksRepository = void 0;
const common_1 = require("@nestjs/common");
const pg_1 = require("pg");
const search_query_1 = require("./search/search-query");
const BOOK_COLUMNS = 'id, title, author, format, chapters, chunk_count, created_at';
function toBook(r) {
    return {
        id: r.id,
        title: r.title,
        author: r.author,
        format: r.format,
        chapters: r.chapters,
        chunkCount: r.chunk_count,
        createdAt: r.created_at.toISOString(),
    };
}
/** Rows per INSERT when storing chunks (each statement sends a few MB at most). */
const CHUNK_BATCH = 2_000;
/** Plain parameterised SQL over books, book_chunks and book_terms. */
let BooksRepository = class BooksRepository {
    constructor(pool) {
        this.pool = pool;
    }
    async transaction(work) {
        const client = await this.pool.connect();
        try {
            await client.query('BEGIN');
            const result = await work(client);
            await client.query('COMMIT');
            return result;
        }
        catch (e) {
            await client.query('ROLLBACK').catch(() => undefined);
            throw e;
        }
        finally {
            client.release();
        }
    }
    /** Stores a book, its chunks and its vocabulary; call inside transaction(). */
    async insert(client, book, chunks) {
        const avg = chunks.length ? chunks.reduce((s, c) => s + Buffer.byteLength(c.text), 0) / chunks.length : 0;
        const { rows } = await client.query(`INSERT INTO books (owner_id, title, author, format, chapters, chunk_count, avg_chunk_bytes, size_bytes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       RETURNING ${BOOK_COLUMNS}`, [
            book.ownerId,
            book.title,
            book.author,
            book.format,
            JSON.stringify(book.chapters),
            chunks.length,
            avg,
            book.sizeBytes,
        ]);
        const bookId = rows[0].id;
        for (let i = 0; i < chunks.length; i += CHUNK_BATCH) {
            const batch = chunks.slice(i, i + CHUNK_BATCH);
            await client.query(`INSERT INTO book_chunks (book_id, ordinal, chapter_index, chapter, section, page, text)
         SELECT $1, * FROM unnest($2::int[], $3::int[], $4::text[], $5::text[], $6::int[], $7::text[])`, [
                bookId,
                batch.map((c) => c.ordinal),
                batch.map((c) => c.chapterIndex),
                batch.map((c) => c.chapter),
                batch.map((c) => c.section),
                batch.map((c) => c.page),
                batch.map((c) => c.text),
            ]);
        }
        // the vocabulary with document frequencies, straight from the stored tsvectors
        await client.query(`INSERT INTO book_terms (book_id, lexeme, ndoc)
       SELECT $1, u.lexeme, count(*)
       FROM book_chunks c CROSS JOIN LATERAL unnest(tsvector_to_array(c.tsv)) AS u(lexeme)
       WHERE c.book_id = $1
       GROUP BY u.lexeme`, [bookId]);
        return toBook(rows[0]);
    }
    async list(ownerId) {
        const { rows } = await this.pool.query(`SELECT ${BOOK_COLUMNS} FROM books WHERE owner_id = $1 ORDER BY created_at DESC, id DESC`, [ownerId]);
        return rows.map(toBook);
    }
    /** The book when it exists and (unless ownerId is null) belongs to ownerId. */
    async find(ownerId, id) {
        const { rows } = await this.pool.query(`SELECT ${BOOK_COLUMNS} FROM books WHERE id = $1 AND ($2::text IS NULL OR owner_id = $2)`, [id, ownerId]);
        return rows.length ? toBook(rows[0]) : null;
    }
    /** Deletes the book with its chunks and vocabulary (cascade); false when there was none to delete. */
    async delete(ownerId, id) {
        const { rowCount } = await this.pool.query('DELETE FROM books WHERE id = $1 AND owner_id = $2', [id, ownerId]);
        return (rowCount ?? 0) > 0;
    }
    /**
     * The k best passages for a question, from chapters ≤ maxChapter (null: all), best first,
     * with scores in 0..1.
     */
    async search(bookId, query, k, maxChapter) {
        const { rows } = await this.pool.query({ name: 'books-search', text: search_query_1.SEARCH_SQL, values: (0, search_query_1.searchParams)(bookId, query, maxChapter, k) });
        return rows.map((r) => ({
            chunkId: r.id,
            chapter: r.chapter,
            chapterIndex: r.chapter_index,
            section: r.section,
            page: r.page,
            text: r.text,
            score: Math.round(r.score * 10_000) / 10_000,
        }));
    }
};
exports.BooksRepository = BooksRepository;
exports.BooksRepository = BooksRepository = __decorate([
    (0, common_1.Injectable)(),
    __param(0, (0, common_1.Inject)(pg_1.Pool)),
    __metadata("design:paramtypes", [pg_1.Pool])
], BooksRepository);
//# sourceMappingURL=books.repository.js.map