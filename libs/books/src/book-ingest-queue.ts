import type { JobsOptions } from 'bullmq';

/** The worker's queue of book ingestions (apps/worker/src/books), apart from the agent turns. */
export const BOOK_INGEST_QUEUE = 'book-ingest';
export const INGEST_BOOK_JOB = 'ingest-book';

export interface IngestBookJob {
  bookId: string;
}

/** One job per book: a re-enqueue (the sweeper) of a book already queued adds nothing. */
export const ingestJobId = (bookId: string) => `book_${bookId}`;

export const INGEST_JOB_OPTIONS: JobsOptions = {
  // a refused book is not retried (it fails for good); these cover a worker or database fault
  attempts: 3,
  backoff: { type: 'exponential', delay: 2_000 },
  removeOnComplete: true,
  removeOnFail: 1_000,
};
