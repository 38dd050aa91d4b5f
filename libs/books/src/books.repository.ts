import { Inject, Injectable } from '@nestjs/common';
import { Pool, PoolClient } from 'pg';
import { inTransaction } from '@parley/event-store';
import { ChunkDraft } from './chunking/chunker';
import { Book, BookFormat, ChapterRef, SearchHit } from './book.types';
import { SEARCH_SQL, searchParams } from './search/search-query';

interface BookRow {
  id: string;
  title: string;
  author: string | null;
  format: BookFormat;
  chapters: ChapterRef[];
  chunk_count: number;
  created_at: Date;
}

const BOOK_COLUMNS = 'id, title, author, format, chapters, chunk_count, created_at';

function toBook(r: BookRow): Book {
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

export interface NewBook {
  ownerId: string;
  title: string;
  author: string | null;
  format: BookFormat;
  chapters: ChapterRef[];
  sizeBytes: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Rows per INSERT when storing chunks (each statement sends a few MB at most). */
const CHUNK_BATCH = 2_000;

/** Plain parameterised SQL over books, book_chunks and book_terms. */
@Injectable()
export class BooksRepository {
  constructor(@Inject(Pool) private readonly pool: Pool) {}

  transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, work);
  }

  /** Stores a book, its chunks and its vocabulary; call inside transaction(). */
  async insert(client: PoolClient, book: NewBook, chunks: ChunkDraft[]): Promise<Book> {
    const avg = chunks.length ? chunks.reduce((s, c) => s + Buffer.byteLength(c.text), 0) / chunks.length : 0;
    const { rows } = await client.query<BookRow>(
      `INSERT INTO books (owner_id, title, author, format, chapters, chunk_count, avg_chunk_bytes, size_bytes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       RETURNING ${BOOK_COLUMNS}`,
      [
        book.ownerId,
        book.title,
        book.author,
        book.format,
        JSON.stringify(book.chapters),
        chunks.length,
        avg,
        book.sizeBytes,
      ],
    );
    const bookId = rows[0].id;
    for (let i = 0; i < chunks.length; i += CHUNK_BATCH) {
      const batch = chunks.slice(i, i + CHUNK_BATCH);
      await client.query(
        `INSERT INTO book_chunks (book_id, ordinal, chapter_index, chapter, section, page, text)
         SELECT $1, * FROM unnest($2::int[], $3::int[], $4::text[], $5::text[], $6::int[], $7::text[])`,
        [
          bookId,
          batch.map((c) => c.ordinal),
          batch.map((c) => c.chapterIndex),
          batch.map((c) => c.chapter),
          batch.map((c) => c.section),
          batch.map((c) => c.page),
          batch.map((c) => c.text),
        ],
      );
    }
    // the vocabulary with document frequencies, straight from the stored tsvectors
    await client.query(
      `INSERT INTO book_terms (book_id, lexeme, ndoc)
       SELECT $1, u.lexeme, count(*)
       FROM book_chunks c CROSS JOIN LATERAL unnest(tsvector_to_array(c.tsv)) AS u(lexeme)
       WHERE c.book_id = $1
       GROUP BY u.lexeme`,
      [bookId],
    );
    return toBook(rows[0]);
  }

  async list(ownerId: string): Promise<Book[]> {
    const { rows } = await this.pool.query<BookRow>(
      `SELECT ${BOOK_COLUMNS} FROM books WHERE owner_id = $1 ORDER BY created_at DESC, id DESC`,
      [ownerId],
    );
    return rows.map(toBook);
  }

  /** The book when it exists and (unless ownerId is null) belongs to ownerId. */
  async find(ownerId: string | null, id: string): Promise<Book | null> {
    if (!UUID.test(id)) return null;
    const { rows } = await this.pool.query<BookRow>(
      `SELECT ${BOOK_COLUMNS} FROM books WHERE id = $1 AND ($2::text IS NULL OR owner_id = $2)`,
      [id, ownerId],
    );
    return rows.length ? toBook(rows[0]) : null;
  }

  /** Deletes the book with its chunks and vocabulary (cascade); false when there was none to delete. */
  async delete(ownerId: string, id: string): Promise<boolean> {
    if (!UUID.test(id)) return false;
    const { rowCount } = await this.pool.query('DELETE FROM books WHERE id = $1 AND owner_id = $2', [id, ownerId]);
    return (rowCount ?? 0) > 0;
  }

  /**
   * The k best passages for a question, from chapters ≤ maxChapter (null: all), best first,
   * with scores in 0..1.
   */
  async search(bookId: string, query: string, k: number, maxChapter: number | null): Promise<SearchHit[]> {
    const { rows } = await this.pool.query<{
      id: string;
      chapter: string;
      chapter_index: number;
      section: string | null;
      page: number | null;
      text: string;
      score: number;
    }>({ name: 'books-search', text: SEARCH_SQL, values: searchParams(bookId, query, maxChapter, k) });
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
}
