import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
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

/** Chunks per batch when storing a book: each batch is one short transaction (a fraction of a second). */
export const INGEST_BATCH = 250;

/** An ingest still 'ingesting' after this long was abandoned (its process died) and is deleted. */
const ABANDONED_AFTER = '1 hour';

/**
 * Plain parameterised SQL over books, book_chunks and book_terms. A book is written in short
 * transactions: create, addChunks batch by batch, markReady; until then it is neither listed
 * nor found.
 */
@Injectable()
export class BooksRepository {
  constructor(@Inject(Pool) private readonly pool: Pool) {}

  /** Starts storing a book: its row, 'ingesting' until markReady. Returns its id. */
  async create(book: NewBook, chunks: ChunkDraft[]): Promise<string> {
    const avg = chunks.length ? chunks.reduce((s, c) => s + Buffer.byteLength(c.text), 0) / chunks.length : 0;
    const { rows } = await this.pool.query<{ id: string }>(
      `INSERT INTO books (owner_id, title, author, format, chapters, chunk_count, avg_chunk_bytes, size_bytes, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'ingesting')
       RETURNING id`,
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
    return rows[0].id;
  }

  /**
   * Stores a batch of a book's chunks and adds their words to its vocabulary (with the number
   * of chunks each occurs in), in one statement: the batch is in whole or not at all.
   */
  async addChunks(bookId: string, batch: ChunkDraft[]): Promise<void> {
    await this.pool.query(
      `WITH stored AS (
         INSERT INTO book_chunks (book_id, ordinal, chapter_index, chapter, section, page, text)
         SELECT $1, * FROM unnest($2::int[], $3::int[], $4::text[], $5::text[], $6::int[], $7::text[])
         RETURNING tsv
       )
       INSERT INTO book_terms (book_id, lexeme, ndoc)
       SELECT $1, u.lexeme, count(*) FROM stored CROSS JOIN LATERAL unnest(tsvector_to_array(stored.tsv)) AS u(lexeme)
       GROUP BY u.lexeme
       ON CONFLICT (book_id, lexeme) DO UPDATE SET ndoc = book_terms.ndoc + excluded.ndoc`,
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

  /** Makes a fully stored book visible. */
  async markReady(bookId: string): Promise<Book> {
    const { rows } = await this.pool.query<BookRow>(
      `UPDATE books SET status = 'ready' WHERE id = $1 RETURNING ${BOOK_COLUMNS}`,
      [bookId],
    );
    return toBook(rows[0]);
  }

  /** Deletes a book whatever its state, with what was stored of it (a failed ingest). */
  async discard(bookId: string): Promise<void> {
    await this.pool.query('DELETE FROM books WHERE id = $1', [bookId]);
  }

  /** Deletes the books whose ingest was abandoned half-way (the process storing them died). */
  async discardAbandoned(): Promise<void> {
    await this.pool.query(`DELETE FROM books WHERE status = 'ingesting' AND created_at < now() - $1::interval`, [
      ABANDONED_AFTER,
    ]);
  }

  async list(ownerId: string): Promise<Book[]> {
    const { rows } = await this.pool.query<BookRow>(
      `SELECT ${BOOK_COLUMNS} FROM books WHERE owner_id = $1 AND status = 'ready' ORDER BY created_at DESC, id DESC`,
      [ownerId],
    );
    return rows.map(toBook);
  }

  /** The book when it exists and (unless ownerId is null) belongs to ownerId. */
  async find(ownerId: string | null, id: string): Promise<Book | null> {
    if (!UUID.test(id)) return null;
    const { rows } = await this.pool.query<BookRow>(
      `SELECT ${BOOK_COLUMNS} FROM books WHERE id = $1 AND status = 'ready' AND ($2::text IS NULL OR owner_id = $2)`,
      [id, ownerId],
    );
    return rows.length ? toBook(rows[0]) : null;
  }

  /** Whether the book exists (ingesting or ready) and belongs to ownerId: a conversation may be about it. */
  async isOwnedBy(ownerId: string, id: string): Promise<boolean> {
    if (!UUID.test(id)) return false;
    const { rowCount } = await this.pool.query('SELECT 1 FROM books WHERE id = $1 AND owner_id = $2', [id, ownerId]);
    return (rowCount ?? 0) > 0;
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
