import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import type { Usage } from '@parley/conversation';
import type { BookPassage, ContextEstimate } from './contextual-prompt';

export interface PassageToSituate {
  id: string;
  text: string;
}

/** books.contextualization: where a book's contextualisation stands. */
export interface ContextualizationState {
  status: 'running' | 'ready' | 'failed';
  model: string;
  estimate: ContextEstimate;
  /** tokens the API reported (and their price), summed over every run of the book */
  usage: Usage & { usd: number };
  done: number;
  total: number;
  error?: string;
}

/**
 * book_chunks.context and books.contextualization. Storing a context also adds its new words to
 * the book's vocabulary (book_terms, for the words' rarity) and drops the passage's vectors, so
 * the next embedding pass embeds the passage with its context.
 */
@Injectable()
export class ContextsRepository {
  constructor(@Inject(Pool) private readonly pool: Pool) {}

  /** Every passage of the book in reading order (the cached prefix). */
  async passages(bookId: string): Promise<BookPassage[]> {
    const { rows } = await this.pool.query<BookPassage>(
      'SELECT chapter, text FROM book_chunks WHERE book_id = $1 ORDER BY ordinal',
      [bookId],
    );
    return rows;
  }

  /** The passages still without a context, in reading order. */
  async pending(bookId: string): Promise<PassageToSituate[]> {
    const { rows } = await this.pool.query<PassageToSituate>(
      'SELECT id, text FROM book_chunks WHERE book_id = $1 AND context IS NULL ORDER BY ordinal',
      [bookId],
    );
    return rows;
  }

  /**
   * Stores a passage's context (once: a passage that has one keeps it; false when it had one or
   * is gone), in one statement: the words the regenerated tsv gained are counted into
   * book_terms, and its vectors are dropped. The CTEs share one snapshot, so `before` reads the tsv as it was before the update. The
   * vocabulary rows are locked in lexeme order: concurrent stores of one book (the run's lanes)
   * otherwise deadlock on the words their contexts share.
   */
  async store(bookId: string, chunkId: string, context: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ n: number }>(
      `WITH before AS (SELECT tsv FROM book_chunks WHERE id = $2 AND book_id = $1 AND context IS NULL),
            updated AS (
              UPDATE book_chunks SET context = $3 WHERE id = $2 AND book_id = $1 AND context IS NULL RETURNING tsv
            ),
            gained AS (
              SELECT unnest(tsvector_to_array(u.tsv)) AS lexeme FROM updated u
              EXCEPT SELECT unnest(tsvector_to_array(b.tsv)) FROM before b
            ),
            vectors AS (DELETE FROM book_chunk_embeddings WHERE chunk_id = $2 AND EXISTS (SELECT 1 FROM updated)),
            terms AS (
              INSERT INTO book_terms (book_id, lexeme, ndoc)
              SELECT $1, lexeme, 1 FROM gained ORDER BY lexeme
              ON CONFLICT (book_id, lexeme) DO UPDATE SET ndoc = book_terms.ndoc + 1
            )
       SELECT count(*)::int AS n FROM updated`,
      [bookId, chunkId, context],
    );
    return rows[0].n > 0;
  }

  async setState(bookId: string, state: ContextualizationState): Promise<void> {
    await this.pool.query('UPDATE books SET contextualization = $2 WHERE id = $1', [bookId, JSON.stringify(state)]);
  }

  async state(bookId: string): Promise<ContextualizationState | null> {
    const { rows } = await this.pool.query<{ contextualization: ContextualizationState | null }>(
      'SELECT contextualization FROM books WHERE id = $1',
      [bookId],
    );
    return rows[0]?.contextualization ?? null;
  }

  /** The title of a book, for the prompt (null: no such book). */
  /** Who pays for the book's model calls: its uploader, and the budget recorded with the upload. */
  async payerOf(bookId: string): Promise<{ ownerId: string; budgetUsdPerMonth: number | null } | undefined> {
    const { rows } = await this.pool.query<{ owner_id: string; budget_usd_per_month: number | null }>(
      'SELECT owner_id, budget_usd_per_month FROM books WHERE id = $1',
      [bookId],
    );
    return rows[0] && { ownerId: rows[0].owner_id, budgetUsdPerMonth: rows[0].budget_usd_per_month };
  }

  async title(bookId: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ title: string }>('SELECT title FROM books WHERE id = $1', [bookId]);
    return rows[0]?.title ?? null;
  }

  /** Ready books with passages still lacking a context (the CLI's `contexts add --all`). */
  async booksToSituate(): Promise<{ id: string; title: string }[]> {
    const { rows } = await this.pool.query<{ id: string; title: string }>(
      `SELECT b.id, b.title FROM books b
        WHERE b.status = 'ready' AND EXISTS (SELECT 1 FROM book_chunks c WHERE c.book_id = b.id AND c.context IS NULL)
        ORDER BY b.created_at`,
    );
    return rows;
  }
}
