import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { BOOK_INGEST_QUEUE, BookIngest, INGEST_BOOK_JOB, INGEST_JOB_OPTIONS, ingestJobId } from '@parley/books';

const SWEEP_MS = 30_000;

/**
 * The API's enqueue after storing an upload is a single shot: a Redis blip or a Redis restarted
 * empty would leave the book 'ingesting' for ever. At boot and every 30 s this re-adds a job
 * for every book still ingesting; the job id is the book's, so a job already there is kept.
 */
@Injectable()
export class BookIngestSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BookIngestSweeper.name);
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly ingest: BookIngest,
    @InjectQueue(BOOK_INGEST_QUEUE) private readonly queue: Queue,
  ) {}

  onApplicationBootstrap(): void {
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async sweep(): Promise<void> {
    try {
      for (const bookId of await this.ingest.ingestingIds())
        await this.queue.add(INGEST_BOOK_JOB, { bookId }, { jobId: ingestJobId(bookId), ...INGEST_JOB_OPTIONS });
    } catch (e) {
      this.logger.warn(`book ingest sweep failed: ${(e as Error).message}`);
    }
  }
}
