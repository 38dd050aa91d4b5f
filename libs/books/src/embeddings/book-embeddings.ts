import { Logger } from '@nestjs/common';
import { SearchHit } from '../book.types';
import { Embedder } from './embedder';
import { BookVectors, EmbeddingsRepository } from './embeddings.repository';

/** Passages embedded and stored per round (each round is one insert). */
export const EMBED_STORE_BATCH = 256;

/** Decoded vectors of this many books are kept in memory (a 2,000-passage book at 1,024 dimensions is 8 MB). */
const CACHED_BOOKS = 8;

export interface EmbedProgress {
  embeddingsWritten: number;
  embeddingsTotal: number;
}

/**
 * A book's vectors: embedding its passages (only those without a vector of the model, so a
 * retry or a re-embed redoes nothing) and the exact nearest passages to a question.
 */
export class BookEmbeddings {
  private readonly logger = new Logger(BookEmbeddings.name);
  private readonly cache = new Map<string, BookVectors>();

  constructor(
    readonly embedder: Embedder,
    private readonly repo: EmbeddingsRepository,
    /** passages per round of embed-and-store (progress is reported after each) */
    private readonly storeBatch = EMBED_STORE_BATCH,
  ) {}

  get model(): string {
    return this.embedder.model;
  }

  /**
   * Embeds the passages the book lacks vectors for, batch by batch with progress; marks the
   * book's vectors ready (dropping those of other models), or failed and rethrows.
   */
  async embedBook(bookId: string, onProgress: (p: EmbedProgress) => Promise<void> | void = () => undefined) {
    const model = this.embedder.model;
    await this.repo.setStatus(bookId, 'embedding', model);
    try {
      const missing = await this.repo.missing(bookId, model);
      const already = await this.repo.count(bookId, model);
      const total = already + missing.length;
      await onProgress({ embeddingsWritten: already, embeddingsTotal: total });
      for (let i = 0; i < missing.length; i += this.storeBatch) {
        const batch = missing.slice(i, i + this.storeBatch);
        const vectors = await this.embedder.embedDocuments(batch.map((c) => c.text));
        await this.repo.store(bookId, model, batch, vectors);
        await onProgress({ embeddingsWritten: already + i + batch.length, embeddingsTotal: total });
      }
      await this.repo.dropOtherModels(bookId, model);
      await this.repo.setStatus(bookId, 'ready', model);
      this.cache.delete(bookId);
      return { embedded: missing.length, total };
    } catch (e) {
      await this.repo.setStatus(bookId, 'failed', model).catch(() => undefined);
      throw e;
    }
  }

  /** The ready books not (all) embedded with the configured model. */
  booksToEmbed(): Promise<{ id: string; title: string }[]> {
    return this.repo.booksToEmbed(this.embedder.model);
  }

  /** Whether the book's vectors are all of the configured model. */
  async ready(bookId: string): Promise<boolean> {
    const s = await this.repo.status(bookId);
    return s.status === 'ready' && s.model === this.embedder.model;
  }

  /** The n passages nearest to the question (cosine), from chapters ≤ maxChapter, best first. */
  async nearest(bookId: string, query: Float32Array, n: number, maxChapter: number | null): Promise<SearchHit[]> {
    const v = await this.load(bookId);
    if (!v.chunkIds.length || v.dimensions !== query.length) {
      if (v.chunkIds.length)
        this.logger.warn(`book ${bookId}: query has ${query.length} dimensions, its vectors ${v.dimensions}`);
      return [];
    }
    const top = topK(v, query, n, maxChapter);
    const hits = await this.repo.hits(
      bookId,
      top.map((t) => v.chunkIds[t.row]),
    );
    return top.flatMap((t) => {
      const h = hits.get(v.chunkIds[t.row]);
      return h ? [{ ...h, score: Math.max(0, Math.min(1, t.score)) }] : [];
    });
  }

  private async load(bookId: string): Promise<BookVectors> {
    const hit = this.cache.get(bookId);
    if (hit) {
      this.cache.delete(bookId); // most recently used last
      this.cache.set(bookId, hit);
      return hit;
    }
    const v = await this.repo.vectors(bookId, this.embedder.model);
    this.cache.set(bookId, v);
    while (this.cache.size > CACHED_BOOKS) this.cache.delete(this.cache.keys().next().value!);
    return v;
  }

  /** Forgets a book's decoded vectors (deleted, or re-embedded by another process). */
  forget(bookId: string): void {
    this.cache.delete(bookId);
  }
}

/** Exact top-n by dot product (vectors are unit length, so cosine); rows are in chapter order. */
export function topK(
  v: BookVectors,
  query: Float32Array,
  n: number,
  maxChapter: number | null,
): { row: number; score: number }[] {
  const d = v.dimensions;
  const best: { row: number; score: number }[] = [];
  for (let row = 0; row < v.chunkIds.length; row++) {
    if (maxChapter !== null && v.chapterIndexes[row] > maxChapter) break; // sorted by chapter
    let s = 0;
    const base = row * d;
    for (let j = 0; j < d; j++) s += v.matrix[base + j] * query[j];
    if (best.length < n || s > best[best.length - 1].score) {
      let i = best.length < n ? best.length : best.length - 1;
      if (best.length < n) best.push({ row, score: s });
      while (i > 0 && best[i - 1].score < s) {
        best[i] = best[i - 1];
        i--;
      }
      best[i] = { row, score: s };
    }
  }
  return best;
}
