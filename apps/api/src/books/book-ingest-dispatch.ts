import { Injectable, Logger } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { BOOK_INGEST_QUEUE, INGEST_BOOK_JOB, INGEST_JOB_OPTIONS, ingestJobId } from '@parley/books';

/**
 * Hands a stored upload to the workers. Best effort, like TurnEnqueuer: the book is in
 * Postgres already, and the worker's BookIngestSweeper enqueues any book still ingesting
 * without a job, so a Redis blip here delays the book but never loses it.
 */
@Injectable()
export class BookIngestDispatch {
  private readonly logger = new Logger(BookIngestDispatch.name);

  constructor(@InjectQueue(BOOK_INGEST_QUEUE) private readonly queue: Queue) {}

  async enqueue(bookId: string): Promise<void> {
    const timeout = new Promise((_, rej) => setTimeout(() => rej(new Error('timeout')), 2_000).unref());
    await Promise.race([
      this.queue.add(INGEST_BOOK_JOB, { bookId }, { jobId: ingestJobId(bookId), ...INGEST_JOB_OPTIONS }),
      timeout,
    ]).catch((e: Error) => this.logger.warn(`enqueue of book ${bookId} failed: ${e.message}`));
  }
}
