import { Injectable } from '@nestjs/common';
import { BookNotFoundError, BookRejectedError } from './book.errors';
import { Book, BOOK_FORMATS, IngestBookInput, SearchOptions, SearchResult } from './book.types';
import { chunkBook } from './chunking/chunker';
import { parseBook } from './parsing/parse-book';
import { BooksRepository, INGEST_BATCH } from './books.repository';
import { queryText } from './search/query-text';

export const DEFAULT_SEARCH_K = 5;
export const MAX_SEARCH_K = 20;
export const MAX_TITLE_CHARS = 200;

/** Ingest (parse → chunk → store in short batches), list, show, delete and search books. */
@Injectable()
export class BooksService {
  constructor(private readonly repo: BooksRepository) {}

  /**
   * Parses, chunks and stores a book, visible once whole; a refused upload throws BookRejectedError
   * and a failure half-way deletes what was stored.
   */
  async ingest(ownerId: string, input: IngestBookInput): Promise<Book> {
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(`${input.title ?? ''}${input.author ?? ''}`)) {
      throw new BookRejectedError(400, 'title and author must not contain control characters');
    }
    const title = input.title?.trim() ?? '';
    if (!title || title.length > MAX_TITLE_CHARS) {
      throw new BookRejectedError(400, `title must be 1..${MAX_TITLE_CHARS} characters`);
    }
    const author = input.author?.trim() || null;
    if (author && author.length > MAX_TITLE_CHARS)
      throw new BookRejectedError(400, `author must be at most ${MAX_TITLE_CHARS} characters`);
    if (!BOOK_FORMATS.includes(input.format)) {
      throw new BookRejectedError(415, `format must be one of ${BOOK_FORMATS.join(', ')}`);
    }
    const parsed = await parseBook(input.format, input.content, { fallbackTitle: title });
    const chunks = chunkBook(parsed.chapters);
    const sizeBytes =
      typeof input.content === 'string' ? Buffer.byteLength(input.content, 'utf8') : input.content.length;
    await this.repo.discardAbandoned();
    const chapters = parsed.chapters.map((c) => ({ index: c.index, title: c.title }));
    const bookId = await this.repo.create(
      { ownerId, title, author, format: input.format, chapters, sizeBytes },
      chunks,
    );
    try {
      // short transactions, batch by batch: one long one would stall every tailer of the event log
      for (let i = 0; i < chunks.length; i += INGEST_BATCH)
        await this.repo.addChunks(bookId, chunks.slice(i, i + INGEST_BATCH));
      return await this.repo.markReady(bookId);
    } catch (e) {
      await this.repo.discard(bookId).catch(() => undefined);
      throw e;
    }
  }

  list(ownerId: string): Promise<Book[]> {
    return this.repo.list(ownerId);
  }

  async get(ownerId: string, id: string): Promise<Book> {
    const book = await this.repo.find(ownerId, id);
    if (!book) throw new BookNotFoundError(id);
    return book;
  }

  async delete(ownerId: string, id: string): Promise<void> {
    if (!(await this.repo.delete(ownerId, id))) throw new BookNotFoundError(id);
  }

  /**
   * The passages that best answer a reader's question, from chapters up to maxChapter.
   * ownerId null skips the ownership check (trusted callers such as the benchmark).
   */
  async search(ownerId: string | null, bookId: string, query: string, opts: SearchOptions = {}): Promise<SearchResult> {
    if (!(await this.repo.find(ownerId, bookId))) throw new BookNotFoundError(bookId);
    const k = Math.min(Math.max(Math.trunc(opts.k ?? DEFAULT_SEARCH_K), 1), MAX_SEARCH_K);
    const maxChapter = opts.maxChapter ?? null;
    const text = queryText(query);
    if (!text) return { items: [] };
    return { items: await this.repo.search(bookId, text, k, maxChapter) };
  }
}
