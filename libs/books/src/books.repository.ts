import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { ChunkDraft } from './chunking/chunker';
import { IngestBusyError } from './book.errors';
import { Book, BookFormat, BookProgress, BookStatus, BookVisibility, ChapterRef } from './book.types';
import { isUuid } from '@parley/platform';

export interface BookRow {
  id: string;
  title: string;
  author: string | null;
  format: BookFormat;
  visibility: BookVisibility;
  status: BookStatus;
  chapters: ChapterRef[];
  chunk_count: number;
  progress: BookProgress;
  error: { code: string; message: string } | null;
  embedding_status: 'embedding' | 'ready' | 'failed' | null;
  embedding_model: string | null;
  created_at: Date;
}

export const BOOK_COLUMNS =
  'id, title, author, format, visibility, status, chapters, chunk_count, progress, error, embedding_status, embedding_model, created_at';

export function toBook(r: BookRow): Book {
  return {
    id: r.id,
    title: r.title,
    author: r.author,
    format: r.format,
    visibility: r.visibility,
    status: r.status,
    chapters: r.chapters,
    chunkCount: r.chunk_count,
    progress: r.progress,
    ...(r.status === 'failed' && r.error ? { error: r.error } : {}),
    ...(r.embedding_status && r.embedding_model
      ? { embeddings: { status: r.embedding_status, model: r.embedding_model } }
      : {}),
    createdAt: r.created_at.toISOString(),
  };
}

export interface NewBook {
  ownerId: string;
  title: string;
  author: string | null;
  format: BookFormat;
  /** the uploader's monthly budget in force (contextual retrieval is held to it); absent: none set */
  budgetUsdPerMonth?: number;
  /** published to this catalogue (a tenant id, '' the deployment's own); absent: the uploader's private book */
  catalogue?: string;
  /** the uploader chose the title (false: the file's name, replaced by the book's own once parsed); default true */
  titleGiven?: boolean;
}

/** Ingestions in flight allowed per user and over the service; null: no cap (the CLI). */
export interface IngestCaps {
  perUser: number;
  global: number;
}

export interface StoredUpload {
  ownerId: string;
  title: string;
  author: string | null;
  format: BookFormat;
  content: Buffer;
  titleGiven: boolean;
}

/** The title and author a parsed book states, to replace what the upload lacked. */
export interface StatedMetadata {
  title?: string | null;
  author?: string | null;
}

/** Chunks per batch when storing a book: each batch is one short transaction (a fraction of a second). */
export const INGEST_BATCH = 250;

/** An ingest still 'ingesting' after this long was abandoned (its job was lost) and is deleted. */
const ABANDONED_AFTER = '1 hour';

/** Seconds a client refused for too many ingestions in flight should wait. */
export const INGEST_BUSY_RETRY_AFTER_S = 30;

/** One lock for the cap check and the insert, so two concurrent uploads cannot both take the last slot. */
const INGEST_LOCK = 0x626f6f6b; // 'book'

/**
 * A book's record and its ingestion, as plain parameterised SQL over books, book_uploads,
 * book_chunks and book_terms. A book is written in short transactions: create (with its upload),
 * addChunks batch by batch, markReady or fail; until ready it is neither searchable nor open to
 * conversations. Who may see a book is BookShelf's; searching its passages, PassagesRepository's.
 */
@Injectable()
export class BooksRepository {
  constructor(@Inject(Pool) private readonly pool: Pool) {}

  /**
   * Stores an accepted upload as a book 'ingesting' with its bytes. With caps, refuses
   * (IngestBusyError) when the owner or the service already has that many in flight.
   */
  async create(book: NewBook, content: Buffer, caps: IngestCaps | null): Promise<Book> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      if (caps) {
        await client.query('SELECT pg_advisory_xact_lock($1)', [INGEST_LOCK]);
        const { rows } = await client.query<{ mine: number; all: number }>(
          `SELECT count(*) FILTER (WHERE owner_id = $1)::int AS mine, count(*)::int AS all FROM books
            WHERE status = 'ingesting' AND created_at > now() - $2::interval`,
          [book.ownerId, ABANDONED_AFTER],
        );
        if (rows[0].mine >= caps.perUser)
          throw new IngestBusyError(
            `you have ${rows[0].mine} books ingesting already (at most ${caps.perUser}); try again when one is done`,
            INGEST_BUSY_RETRY_AFTER_S,
          );
        if (rows[0].all >= caps.global)
          throw new IngestBusyError(
            'the service is ingesting as many books as it can; try again soon',
            INGEST_BUSY_RETRY_AFTER_S,
          );
      }
      const progress: BookProgress = { phase: 'queued', bytesTotal: content.length, chunksWritten: 0 };
      const { rows } = await client.query<BookRow>(
        `INSERT INTO books (owner_id, title, author, format, chapters, chunk_count, avg_chunk_bytes, size_bytes, status, progress,
                            budget_usd_per_month, visibility, tenant)
         VALUES ($1, $2, $3, $4, '[]', 0, 0, $5, 'ingesting', $6, $7, $8, $9)
         RETURNING ${BOOK_COLUMNS}`,
        [
          book.ownerId,
          book.title,
          book.author,
          book.format,
          content.length,
          JSON.stringify(progress),
          book.budgetUsdPerMonth ?? null,
          book.catalogue === undefined ? 'private' : 'catalogue',
          book.catalogue ?? null,
        ],
      );
      await client.query('INSERT INTO book_uploads (book_id, content, title_given) VALUES ($1, $2, $3)', [
        rows[0].id,
        content,
        book.titleGiven ?? true,
      ]);
      await client.query('COMMIT');
      return toBook(rows[0]);
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  }

  /** The stored upload of a book still ingesting; null when the book is gone or done. */
  async loadUpload(bookId: string): Promise<StoredUpload | null> {
    const { rows } = await this.pool.query<{
      owner_id: string;
      title: string;
      author: string | null;
      format: BookFormat;
      content: Buffer;
      title_given: boolean;
    }>(
      `SELECT b.owner_id, b.title, b.author, b.format, u.content, u.title_given
         FROM books b JOIN book_uploads u ON u.book_id = b.id
        WHERE b.id = $1 AND b.status = 'ingesting'`,
      [bookId],
    );
    const r = rows[0];
    return r
      ? {
          ownerId: r.owner_id,
          title: r.title,
          author: r.author,
          format: r.format,
          content: r.content,
          titleGiven: r.title_given,
        }
      : null;
  }

  async setProgress(bookId: string, progress: BookProgress): Promise<void> {
    await this.pool.query(`UPDATE books SET progress = $2 WHERE id = $1 AND status = 'ingesting'`, [
      bookId,
      JSON.stringify(progress),
    ]);
  }

  /** The ids of books waiting for or in ingestion (for re-enqueueing after Redis lost its jobs). */
  async ingestingIds(): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id FROM books WHERE status = 'ingesting' ORDER BY created_at LIMIT 1000`,
    );
    return rows.map((r) => r.id);
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

  /** How many passages of a book still ingesting are stored already (a retried ingest). */
  async storedChunks(bookId: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM book_chunks WHERE book_id = $1',
      [bookId],
    );
    return rows[0].n;
  }

  /** Deletes what a broken-off ingest stored of a book still ingesting, so it is stored again from the start. */
  async clearChunks(bookId: string): Promise<void> {
    await this.pool.query(
      `WITH c AS (DELETE FROM book_chunks WHERE book_id = $1)
       DELETE FROM book_terms WHERE book_id = $1`,
      [bookId],
    );
  }

  /**
   * Makes a fully stored book usable and drops its upload; null when the book was deleted
   * meanwhile. `stated` replaces the title and author (a null or absent one keeps what is stored).
   */
  async markReady(
    bookId: string,
    chapters: ChapterRef[],
    chunks: ChunkDraft[],
    progress: BookProgress,
    stated: StatedMetadata = {},
  ): Promise<Book | null> {
    const avg = chunks.length ? chunks.reduce((s, c) => s + Buffer.byteLength(c.text), 0) / chunks.length : 0;
    const { rows } = await this.pool.query<BookRow>(
      `WITH dropped AS (DELETE FROM book_uploads WHERE book_id = $1)
       UPDATE books SET status = 'ready', chapters = $2, chunk_count = $3, avg_chunk_bytes = $4, progress = $5,
                        title = COALESCE($6, title), author = COALESCE($7, author)
        WHERE id = $1 AND status = 'ingesting' RETURNING ${BOOK_COLUMNS}`,
      [
        bookId,
        JSON.stringify(chapters),
        chunks.length,
        avg,
        JSON.stringify(progress),
        stated.title ?? null,
        stated.author ?? null,
      ],
    );
    return rows.length ? toBook(rows[0]) : null;
  }

  /**
   * Ends an ingestion as failed: deletes its upload, chunks and vocabulary, keeps the row with
   * the error so the owner can read why (until they delete it).
   */
  async fail(bookId: string, error: { code: string; message: string }, progress: BookProgress): Promise<void> {
    await this.pool.query(
      `WITH u AS (DELETE FROM book_uploads WHERE book_id = $1),
            c AS (DELETE FROM book_chunks WHERE book_id = $1),
            t AS (DELETE FROM book_terms WHERE book_id = $1)
       UPDATE books SET status = 'failed', error = $2, progress = $3, chapters = '[]', chunk_count = 0
        WHERE id = $1 AND status = 'ingesting'`,
      [bookId, JSON.stringify(error), JSON.stringify(progress)],
    );
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

  /** The book in any state when it exists and (unless ownerId is null) belongs to ownerId. */
  async find(ownerId: string | null, id: string): Promise<Book | null> {
    if (!isUuid(id)) return null;
    const { rows } = await this.pool.query<BookRow>(
      `SELECT ${BOOK_COLUMNS} FROM books WHERE id = $1 AND ($2::text IS NULL OR owner_id = $2)`,
      [id, ownerId],
    );
    return rows.length ? toBook(rows[0]) : null;
  }

  /** Deletes the book with its chunks and vocabulary (cascade); false when there was none to delete. */
  async delete(ownerId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const { rowCount } = await this.pool.query('DELETE FROM books WHERE id = $1 AND owner_id = $2', [id, ownerId]);
    return (rowCount ?? 0) > 0;
  }
}
