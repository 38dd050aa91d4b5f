import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { isUuid } from '@parley/platform';
import { decodeCursor, encodeCursor, isInstantIdCursor } from '@parley/read-models';
import { Book, BookStatus, BookVisibility } from '../book.types';
import { BOOK_COLUMNS, BookRow, toBook } from '../books.repository';
import { BookReader, TenantReader } from './book-reader';

/** A reader's own private books, or the catalogue of `$2` (NULL: any catalogue). */
const VISIBLE_TO = `((visibility = 'private' AND owner_id = $1) OR (visibility = 'catalogue' AND ($2::text IS NULL OR tenant = $2)))`;

/** A book as the shelf finds it, with what decides who may change it. */
export interface ShelvedBook {
  book: Book;
  ownerId: string;
  /** the catalogue's tenant ('' the deployment's own); null for a private book */
  tenant: string | null;
}

export interface BookPage {
  items: Book[];
  nextCursor: string | null;
}

/** created_at to the microsecond, so a cursor names a row exactly (a JS Date keeps milliseconds). */
const CREATED_KEY = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key`;

/**
 * The books a reader may see (their own private ones and their tenant's catalogue), in plain
 * SQL: one book, a page of them, the titles of some; and the writes that depend on the kind of
 * book (rename, withdraw from the catalogue, an account's private books).
 */
@Injectable()
export class BookShelf {
  constructor(@Inject(Pool) private readonly pool: Pool) {}

  /** The book in any state when the reader may see it. */
  async find(reader: BookReader | null, id: string): Promise<ShelvedBook | null> {
    if (!isUuid(id)) return null;
    // reader null: a trusted caller (the benchmark), who may see any book
    const { rows } = await this.pool.query<BookRow & { owner_id: string; tenant: string | null }>(
      reader
        ? `SELECT ${BOOK_COLUMNS}, owner_id, tenant FROM books WHERE id = $3 AND ${VISIBLE_TO}`
        : `SELECT ${BOOK_COLUMNS}, owner_id, tenant FROM books WHERE id = $1`,
      reader ? [reader.id, reader.catalogue, id] : [id],
    );
    const r = rows[0];
    return r ? { book: toBook(r), ownerId: r.owner_id, tenant: r.tenant } : null;
  }

  /**
   * Newest first, the reader's own books and their tenant's catalogue (or one kind): each kind
   * read from its own index in order, the two merged, so a catalogue of thousands costs a page.
   */
  async page(
    reader: TenantReader,
    opts: { visibility?: BookVisibility; limit: number; cursor?: string },
  ): Promise<BookPage> {
    const after = opts.cursor ? decodeCursor(opts.cursor, isInstantIdCursor) : null;
    const since = `($3::timestamptz IS NULL OR (created_at, id) < ($3::timestamptz, $4::uuid))`;
    const { rows } = await this.pool.query<BookRow & { created_key: string }>(
      `SELECT * FROM (
         (SELECT ${BOOK_COLUMNS}, ${CREATED_KEY} FROM books
           WHERE owner_id = $1 AND visibility = 'private' AND $5::text IS DISTINCT FROM 'catalogue' AND ${since}
           ORDER BY created_at DESC, id DESC LIMIT $6)
         UNION ALL
         (SELECT ${BOOK_COLUMNS}, ${CREATED_KEY} FROM books
           WHERE tenant = $2 AND visibility = 'catalogue' AND $5::text IS DISTINCT FROM 'private' AND ${since}
           ORDER BY created_at DESC, id DESC LIMIT $6)
       ) b ORDER BY created_at DESC, id DESC LIMIT $6`,
      [reader.id, reader.catalogue, after?.[0] ?? null, after?.[1] ?? null, opts.visibility ?? null, opts.limit + 1],
    );
    const page = rows.slice(0, opts.limit);
    const last = page[page.length - 1];
    return {
      items: page.map(toBook),
      nextCursor: rows.length > opts.limit ? encodeCursor([last.created_key, last.id]) : null,
    };
  }

  /** The reader's books among `ids`, with their titles and status (ids they may not see left out). */
  async titles(reader: BookReader, ids: string[]): Promise<Array<{ id: string; title: string; status: BookStatus }>> {
    const valid = ids.filter(isUuid);
    if (valid.length === 0) return [];
    const { rows } = await this.pool.query<{ id: string; title: string; status: BookStatus }>(
      `SELECT id, title, status FROM books WHERE id = ANY($3::uuid[]) AND ${VISIBLE_TO}`,
      [reader.id, reader.catalogue, valid],
    );
    return rows;
  }

  /** The ids of an account's own private books (its erasure leaves the catalogue alone). */
  async privateBookIds(ownerId: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id FROM books WHERE owner_id = $1 AND visibility = 'private'`,
      [ownerId],
    );
    return rows.map((r) => r.id);
  }

  /**
   * The catalogue books an erased account published stay the tenant's, without the account's id:
   * their owner becomes '' (no token's `sub` is empty, so no reader is ever taken for it).
   */
  async forgetPublisher(userId: string): Promise<number> {
    const { rowCount } = await this.pool.query(
      `UPDATE books SET owner_id = '' WHERE owner_id = $1 AND visibility = 'catalogue'`,
      [userId],
    );
    return rowCount ?? 0;
  }

  /** Whether the book is in a catalogue (its erasure is then a withdrawal); false when there is none. */
  async isCatalogue(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const { rows } = await this.pool.query(`SELECT 1 FROM books WHERE id = $1 AND visibility = 'catalogue'`, [id]);
    return rows.length > 0;
  }

  async rename(id: string, title: string): Promise<Book | null> {
    const { rows } = await this.pool.query<BookRow>(
      `UPDATE books SET title = $2 WHERE id = $1 RETURNING ${BOOK_COLUMNS}`,
      [id, title],
    );
    return rows.length ? toBook(rows[0]) : null;
  }

  /** Deletes a catalogue book with its passages, vocabulary, embeddings and contexts (cascade). */
  /**
   * Withdraws a catalogue book in the caller's transaction: its passages' ids are kept as withdrawn
   * (no text), and it goes with its passages, terms and upload (cascades). The passages' ids, or
   * null when it is not a catalogue book (any more).
   */
  async withdraw(id: string, tx: Pick<Pool, 'query'>): Promise<string[] | null> {
    if (!isUuid(id)) return null;
    const { rows } = await tx.query(`SELECT 1 FROM books WHERE id = $1 AND visibility = 'catalogue' FOR UPDATE`, [id]);
    if (rows.length === 0) return null;
    const withdrawn = await tx.query<{ chunk_id: string }>(
      `INSERT INTO withdrawn_passages (chunk_id, book_id) SELECT id, book_id FROM book_chunks WHERE book_id = $1
       ON CONFLICT (chunk_id) DO UPDATE SET book_id = excluded.book_id RETURNING chunk_id`,
      [id],
    );
    await tx.query('DELETE FROM books WHERE id = $1', [id]);
    return withdrawn.rows.map((r) => r.chunk_id);
  }
}
