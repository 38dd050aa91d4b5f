import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { BookLimits, loadBookLimits } from '@parley/config';
import { BookNotFoundError, BookRejectedError } from './book.errors';
import { Book, BookProgress, IngestBookInput } from './book.types';
import { BOOK_CONTEXTS, BOOK_EMBEDDINGS, BOOK_LIMITS } from './book.tokens';
import { BooksRepository, IngestCaps, INGEST_BATCH, NewBook } from './books.repository';
import { BookContexts } from './contexts/book-contexts';
import { BookEmbeddings } from './embeddings/book-embeddings';
import { parseBounded } from './parsing/bounded-parse';
import { ParseLimits } from './parsing/parse-limits';
import { checkUpload } from './upload-check';

/** The config schema's defaults, for callers without a config (the CLI's direct ingest, tests). */
export const DEFAULT_BOOK_LIMITS: BookLimits = loadBookLimits({});
/** The same defaults, the parser's part (one source of them), for callers without a config: tests, benchmarks. */
export const DEFAULT_PARSE_LIMITS: ParseLimits = DEFAULT_BOOK_LIMITS;

/** At most this often is a book's progress written while it is parsed. */
const PROGRESS_EVERY_MS = 250;

/**
 * Ingestion: accept an upload (checks that cost nothing, then stored 'ingesting'), process it
 * (parse in a bounded child process → chunk → store in short batches → contexts and vectors →
 * ready, or failed with a problem code); and the embeddings of ready books re-done (reembed).
 */
@Injectable()
export class BookIngest {
  private readonly logger = new Logger(BookIngest.name);
  private readonly limits: BookLimits;
  private readonly embeddings: BookEmbeddings | null;
  private readonly contexts: BookContexts | null;

  constructor(
    private readonly repo: BooksRepository,
    @Optional() @Inject(BOOK_LIMITS) limits?: BookLimits,
    @Optional() @Inject(BOOK_EMBEDDINGS) embeddings?: BookEmbeddings | null,
    @Optional() @Inject(BOOK_CONTEXTS) contexts?: BookContexts | null,
  ) {
    this.limits = limits ?? DEFAULT_BOOK_LIMITS;
    this.embeddings = embeddings ?? null;
    this.contexts = contexts ?? null;
  }

  /**
   * Checks what can be checked at once (fields, size, type, PDF magic bytes, UTF-8) and stores
   * the upload as a book 'ingesting'. Refusals: BookRejectedError (nothing stored), or
   * IngestBusyError when the caps of ingestions in flight are reached (null caps: none).
   */
  async accept(
    ownerId: string,
    input: IngestBookInput,
    caps: IngestCaps | null = this.caps(),
    options: Pick<NewBook, 'budgetUsdPerMonth' | 'catalogue'> = {},
  ): Promise<Book> {
    const upload = checkUpload(input);
    await this.repo.discardAbandoned();
    return this.repo.create({ ownerId, ...upload, ...options }, upload.bytes, caps);
  }

  /**
   * Ingests an accepted book: parse and chunk (bounded), store, mark ready. A book that cannot
   * be read is marked failed with its problem code and the BookRejectedError is thrown; other
   * errors (the database) are thrown with the book left 'ingesting', to be retried. Null when
   * the book is gone (deleted while waiting) or no longer ingesting.
   */
  async process(bookId: string, onProgress: (p: BookProgress) => void = () => undefined): Promise<Book | null> {
    const upload = await this.repo.loadUpload(bookId);
    if (!upload) return null;
    let progress: BookProgress = { phase: 'scanning', bytesTotal: upload.content.length, chunksWritten: 0 };
    let written = 0;
    const report = (next: Partial<BookProgress>, force = false) => {
      progress = { ...progress, ...next };
      onProgress(progress);
      if (!force && Date.now() - written < PROGRESS_EVERY_MS) return Promise.resolve();
      written = Date.now();
      return this.repo.setProgress(bookId, progress).catch(() => undefined); // progress is best effort
    };
    let parsed;
    try {
      parsed = await parseBounded(upload.format, upload.content, upload.title, this.limits, (p) => void report(p));
    } catch (e) {
      if (e instanceof BookRejectedError) {
        await this.repo.fail(bookId, { code: e.code, message: e.message }, { ...progress, phase: 'failed' });
      }
      throw e;
    }
    const { chapters, chunks, metadata } = parsed;
    await report({ phase: 'storing', chunksTotal: chunks.length }, true);
    // a retried job: all stored already (it broke off later, embedding) is kept with its
    // vectors; a part is stored again from the start
    const stored = await this.repo.storedChunks(bookId);
    if (stored > 0 && stored !== chunks.length) await this.repo.clearChunks(bookId);
    // short transactions, batch by batch: one long one would stall every tailer of the event log
    for (let i = stored === chunks.length ? chunks.length : 0; i < chunks.length; i += INGEST_BATCH) {
      try {
        await this.repo.addChunks(bookId, chunks.slice(i, i + INGEST_BATCH));
      } catch (e) {
        if ((e as { code?: string }).code === '23503') return null; // the book was deleted meanwhile
        throw e;
      }
      await report({ chunksWritten: Math.min(i + INGEST_BATCH, chunks.length) });
    }
    // contexts first: the embedding pass then embeds each passage with its context
    await this.contextualize(bookId);
    await this.embed(bookId, (p) => report({ phase: 'embedding', ...p }));
    // the title and author the book states fill in what the uploader left out (a file name stood for the title)
    const stated = {
      title: upload.titleGiven ? null : metadata?.title,
      author: upload.author === null ? metadata?.author : null,
    };
    return this.repo.markReady(
      bookId,
      chapters,
      chunks,
      { ...progress, phase: 'done', chunksWritten: chunks.length },
      stated,
    );
  }

  /**
   * Embeds the book's passages (those without a vector of the configured model), with progress.
   * A failure is logged and recorded on the book (embedding_status 'failed'); the book stays
   * searchable by full text. Nothing to do without an embeddings provider.
   */
  private async embed(bookId: string, onProgress: (p: Partial<BookProgress>) => Promise<void>): Promise<void> {
    if (!this.embeddings) return;
    const started = Date.now();
    try {
      const { total } = await this.embeddings.embedBook(bookId, onProgress);
      this.logger.log(
        `book ${bookId}: ${total} passages embedded (${this.embeddings.model}) in ${Date.now() - started} ms`,
      );
    } catch (e) {
      if ((e as { code?: string }).code === '23503') return; // the book was deleted meanwhile
      this.logger.warn(`book ${bookId}: embedding failed, full-text search only: ${(e as Error).message}`);
    }
  }

  /**
   * Contextual retrieval (when on): a context for each passage without one. A failure is logged
   * and recorded on the book (books.contextualization); the book is indexed without the missing
   * contexts, and a re-run (`npm run cli -- contexts add`) asks only for those.
   */
  private async contextualize(bookId: string): Promise<void> {
    if (!this.contexts) return;
    let logged = 0;
    try {
      await this.contexts.contextualizeBook(bookId, ({ done, total }) => {
        if (Date.now() - logged < 10_000 && done < total) return;
        logged = Date.now();
        this.logger.log(`book ${bookId}: contexts ${done}/${total}`);
      });
    } catch (e) {
      if ((e as { code?: string }).code === '23503') return; // the book was deleted meanwhile
      this.logger.warn(`book ${bookId}: contextual retrieval failed, indexed without: ${(e as Error).message}`);
    }
  }

  /**
   * Embeds the ready books whose vectors are of another model (or failed, or missing) with the
   * configured one; the old vectors are dropped as each book's new ones are in. For the CLI.
   */
  async reembed(onBook: (b: { id: string; title: string }, n: number, of: number) => void = () => undefined) {
    if (!this.embeddings) throw new Error('no embeddings provider is configured (EMBEDDINGS_PROVIDER)');
    const books = await this.embeddings.booksToEmbed();
    let done = 0;
    const failed: string[] = [];
    for (const b of books) {
      onBook(b, ++done, books.length);
      try {
        await this.embeddings.embedBook(b.id);
      } catch (e) {
        failed.push(b.id);
        this.logger.warn(`book ${b.id}: re-embedding failed: ${(e as Error).message}`);
      }
    }
    return { books: books.length, failed };
  }

  /**
   * accept + process in this process, for the CLI and benchmarks: the stored book, or a
   * BookRejectedError with nothing left behind.
   */
  async ingest(ownerId: string, input: IngestBookInput, onProgress?: (p: BookProgress) => void): Promise<Book> {
    const accepted = await this.accept(ownerId, input, null);
    try {
      const book = await this.process(accepted.id, onProgress);
      if (!book) throw new BookNotFoundError(accepted.id);
      return book;
    } catch (e) {
      await this.repo.discard(accepted.id).catch(() => undefined);
      throw e;
    }
  }

  /** Marks a book failed for a reason other than its content (retries exhausted). */
  async failIngest(bookId: string, message: string): Promise<void> {
    const book = await this.repo.find(null, bookId);
    if (book?.status !== 'ingesting') return;
    await this.repo.fail(bookId, { code: 'book_ingest_failed', message }, { ...book.progress, phase: 'failed' });
  }

  ingestingIds(): Promise<string[]> {
    return this.repo.ingestingIds();
  }

  private caps(): IngestCaps {
    return { perUser: this.limits.ingestPerUser, global: this.limits.ingestGlobal };
  }
}
