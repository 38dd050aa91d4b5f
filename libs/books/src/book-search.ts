import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { BookNotFoundError, BookNotReadyError } from './book.errors';
import { SearchOptions, SearchResult } from './book.types';
import { BOOK_EMBEDDINGS } from './book.tokens';
import { BookReader } from './catalogue/book-reader';
import { BookShelf } from './catalogue/book-shelf.repository';
import { BookEmbeddings } from './embeddings/book-embeddings';
import { FUSION_CANDIDATES, fuseRankings } from './search/hybrid-search';
import { PassagesRepository } from './search/passages.repository';
import { queryText } from './search/query-text';

export const DEFAULT_SEARCH_K = 5;
export const MAX_SEARCH_K = 20;

/** A book's passages for a reader's question: full text, or full text and vectors fused when the book is embedded. */
@Injectable()
export class BookSearch {
  private readonly logger = new Logger(BookSearch.name);
  private readonly embeddings: BookEmbeddings | null;

  constructor(
    private readonly passages: PassagesRepository,
    private readonly shelf: BookShelf,
    @Optional() @Inject(BOOK_EMBEDDINGS) embeddings?: BookEmbeddings | null,
  ) {
    this.embeddings = embeddings ?? null;
  }

  /**
   * The passages that best answer a reader's question, from chapters up to maxChapter.
   * reader null skips the check that they may see it (trusted callers such as the benchmark).
   */
  async search(
    reader: BookReader | null,
    bookId: string,
    query: string,
    opts: SearchOptions = {},
  ): Promise<SearchResult> {
    await this.assertReady(reader, bookId);
    const k = Math.min(Math.max(Math.trunc(opts.k ?? DEFAULT_SEARCH_K), 1), MAX_SEARCH_K);
    const maxChapter = opts.maxChapter ?? null;
    const text = queryText(query);
    if (!text) return { items: [] };
    if (!this.embeddings || !(await this.embeddings.ready(bookId)))
      return { items: await this.passages.search(bookId, text, k, maxChapter) };
    return { items: await this.hybridSearch(bookId, query, text, k, maxChapter, this.embeddings) };
  }

  /** BookNotFoundError, or BookNotReadyError while the book ingests or when it failed. */
  private async assertReady(reader: BookReader | null, id: string): Promise<void> {
    const book = (await this.shelf.find(reader, id))?.book;
    if (!book) throw new BookNotFoundError(id);
    if (book.status !== 'ready') throw new BookNotReadyError(id, book.status);
  }

  /**
   * Full text and vectors side by side, fused by reciprocal rank (search/hybrid-search.ts).
   * When the question cannot be embedded (the provider is down), the full-text ranking alone.
   */
  private async hybridSearch(
    bookId: string,
    query: string,
    text: string,
    k: number,
    maxChapter: number | null,
    embeddings: BookEmbeddings,
  ) {
    const n = Math.max(FUSION_CANDIDATES, k);
    const [lexical, vector] = await Promise.all([
      this.passages.search(bookId, text, n, maxChapter),
      embeddings.embedder
        .embedQuery(query)
        .then((q) => embeddings.nearest(bookId, q, n, maxChapter))
        .catch((e: Error) => {
          this.logger.warn(`book ${bookId}: query not embedded, full-text search only: ${e.message}`);
          return null;
        }),
    ]);
    if (!vector) return lexical.slice(0, k);
    return fuseRankings(lexical, vector, k);
  }
}
