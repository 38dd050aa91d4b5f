import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { SearchHit } from '../book.types';
import { hitOf, PASSAGE_COLUMNS, PassageRow } from '../search/passages.repository';

export interface ChunkToEmbed {
  id: string;
  chapterIndex: number;
  text: string;
}

/** One book's vectors of one model, decoded: row i is chunkIds[i], in chapter order. */
export interface BookVectors {
  chunkIds: string[];
  chapterIndexes: Int32Array;
  /** rows × dimensions, each row unit length */
  matrix: Float32Array;
  dimensions: number;
}

export type EmbeddingStatus = 'embedding' | 'ready' | 'failed';

/** Float32 little-endian, the storage format of book_chunk_embeddings.embedding. */
export function encodeVector(v: Float32Array): Buffer {
  const b = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) b.writeFloatLE(v[i], i * 4);
  return b;
}

/**
 * book_chunk_embeddings (one vector per passage and model) and the books' embedding_status and
 * embedding_model. Writes are idempotent: a retried batch inserts nothing twice.
 */
@Injectable()
export class EmbeddingsRepository {
  constructor(@Inject(Pool) private readonly pool: Pool) {}

  /** The book's passages without a vector of this model, in reading order. */
  async missing(bookId: string, model: string): Promise<ChunkToEmbed[]> {
    // a passage's context (contextual retrieval) is embedded with it; only the text is shown
    const { rows } = await this.pool.query<{ id: string; chapter_index: number; text: string }>(
      `SELECT c.id, c.chapter_index, coalesce(c.context || E'\n\n', '') || c.text AS text FROM book_chunks c
        WHERE c.book_id = $1
          AND NOT EXISTS (SELECT 1 FROM book_chunk_embeddings e WHERE e.book_id = $1 AND e.model = $2 AND e.chunk_id = c.id)
        ORDER BY c.ordinal`,
      [bookId, model],
    );
    return rows.map((r) => ({ id: r.id, chapterIndex: r.chapter_index, text: r.text }));
  }

  async count(bookId: string, model: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM book_chunk_embeddings WHERE book_id = $1 AND model = $2',
      [bookId, model],
    );
    return rows[0].n;
  }

  /** Stores a batch of vectors in one statement; what is there already is kept. */
  async store(bookId: string, model: string, chunks: ChunkToEmbed[], vectors: Float32Array[]): Promise<void> {
    await this.pool.query(
      `INSERT INTO book_chunk_embeddings (book_id, model, chunk_id, chapter_index, embedding)
       SELECT $1, $2, * FROM unnest($3::uuid[], $4::int[], $5::bytea[])
       ON CONFLICT DO NOTHING`,
      [bookId, model, chunks.map((c) => c.id), chunks.map((c) => c.chapterIndex), vectors.map(encodeVector)],
    );
  }

  async setStatus(bookId: string, status: EmbeddingStatus, model: string): Promise<void> {
    await this.pool.query('UPDATE books SET embedding_status = $2, embedding_model = $3 WHERE id = $1', [
      bookId,
      status,
      model,
    ]);
  }

  /** Drops the book's vectors of other models (once those of `model` are all in). */
  async dropOtherModels(bookId: string, model: string): Promise<void> {
    await this.pool.query('DELETE FROM book_chunk_embeddings WHERE book_id = $1 AND model <> $2', [bookId, model]);
  }

  /** Ready books whose vectors are not all of `model` (another model, failed, or never embedded). */
  async booksToEmbed(model: string): Promise<{ id: string; title: string }[]> {
    const { rows } = await this.pool.query<{ id: string; title: string }>(
      `SELECT id, title FROM books
        WHERE status = 'ready' AND (embedding_model IS DISTINCT FROM $1 OR embedding_status IS DISTINCT FROM 'ready')
        ORDER BY created_at`,
      [model],
    );
    return rows;
  }

  /** The book's state of embedding, or null when it has none of this model in hand. */
  async status(bookId: string): Promise<{ status: EmbeddingStatus | null; model: string | null }> {
    const { rows } = await this.pool.query<{
      embedding_status: EmbeddingStatus | null;
      embedding_model: string | null;
    }>('SELECT embedding_status, embedding_model FROM books WHERE id = $1', [bookId]);
    return { status: rows[0]?.embedding_status ?? null, model: rows[0]?.embedding_model ?? null };
  }

  /** All the book's vectors of this model, decoded into one matrix. */
  async vectors(bookId: string, model: string): Promise<BookVectors> {
    const { rows } = await this.pool.query<{ chunk_id: string; chapter_index: number; embedding: Buffer }>(
      `SELECT chunk_id, chapter_index, embedding FROM book_chunk_embeddings
        WHERE book_id = $1 AND model = $2 ORDER BY chapter_index`,
      [bookId, model],
    );
    const dimensions = rows.length ? rows[0].embedding.length / 4 : 0;
    const matrix = new Float32Array(rows.length * dimensions);
    const chapterIndexes = new Int32Array(rows.length);
    // a byte copy per row (the platforms Node runs on are little-endian, as stored)
    const bytes = new Uint8Array(matrix.buffer);
    rows.forEach((r, i) => {
      chapterIndexes[i] = r.chapter_index;
      r.embedding.copy(bytes, i * dimensions * 4, 0, dimensions * 4);
    });
    return { chunkIds: rows.map((r) => r.chunk_id), chapterIndexes, matrix, dimensions };
  }

  /** The passages of these ids, as search hits with score 0 (the caller scores them). */
  async hits(bookId: string, ids: string[]): Promise<Map<string, SearchHit>> {
    const { rows } = await this.pool.query<PassageRow>(
      `SELECT ${PASSAGE_COLUMNS} FROM book_chunks WHERE book_id = $1 AND id = ANY($2::uuid[])`,
      [bookId, ids],
    );
    return new Map(rows.map((r) => [r.id, hitOf(r, 0)]));
  }
}
