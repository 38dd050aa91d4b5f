import { BeforeApplicationShutdown, Inject, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Job, UnrecoverableError } from 'bullmq';
import { BOOK_INGEST_QUEUE, BookIngest, BookRejectedError, IngestBookJob, INGEST_BOOK_JOB } from '@parley/books';
import { AppConfig, CONFIG } from '@parley/config';

/**
 * Ingests books in the background: the API stored the upload and answered 202; here it is
 * parsed in a bounded child process (one per job), chunked and stored, with progress on the
 * book's row. A book that cannot be read fails for good (no retry); a fault of the worker or
 * the database is retried, and marks the book failed after the last attempt. The parse runs
 * in another process, so this event loop stays free to renew the job's lock.
 */
@Processor(BOOK_INGEST_QUEUE, { lockDuration: 30_000, stalledInterval: 15_000, autorun: false })
export class BookIngestProcessor extends WorkerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(BookIngestProcessor.name);

  constructor(
    private readonly ingest: BookIngest,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    if (!this.config.books.ingestEnabled) return;
    this.worker.concurrency = this.config.books.ingestConcurrency;
    this.worker.run().catch((e: Error) => this.logger.error(`book worker stopped: ${e.message}`));
  }

  /** A parse in hand is abandoned (its child process exits with us); the job is retried elsewhere. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.config.books.ingestEnabled) await this.worker.close(true);
  }

  async process(job: Job<IngestBookJob>): Promise<void> {
    if (job.name !== INGEST_BOOK_JOB) throw new Error(`no handler for job ${job.name}`);
    const { bookId } = job.data;
    const started = Date.now();
    try {
      const book = await this.ingest.process(bookId);
      if (book) this.logger.log(`book ${bookId} ready: ${book.chunkCount} chunks in ${Date.now() - started} ms`);
    } catch (e) {
      if (e instanceof BookRejectedError) {
        this.logger.warn(`book ${bookId} refused (${e.code}) after ${Date.now() - started} ms: ${e.message}`);
        throw new UnrecoverableError(e.message); // its content will not change: no retry
      }
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1))
        await this.ingest.failIngest(bookId, 'the book could not be stored; try uploading it again');
      throw e;
    }
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, error: Error): void {
    if (job && !(error instanceof UnrecoverableError))
      this.logger.warn(`job ${job.id} failed (attempt ${job.attemptsMade}): ${error.message}`);
  }
}
