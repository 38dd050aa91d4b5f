import { randomUUID } from 'node:crypto';
import { Job, JobJsonRaw, Processor, RedisConnection, Worker, WorkerOptions } from 'bullmq';
import { PRESENT_WORKER_PREFIX } from './worker-presence';

/**
 * BullMQ's Worker, with an id that begins with PRESENT_WORKER_PREFIX, telling a listener of every
 * job it takes, before it starts it: woken for a job, BullMQ looks for the next one (a Redis
 * round trip) before it starts the one it took, and a listener can begin that job's own reads
 * meanwhile. A job taken as another finished is told of too (it starts at once), so a listener
 * knows of every job taken. Installed as the Nest BullModule's worker class (worker.module.ts).
 */
export class TakingWorker extends Worker {
  onTaken?: (job: Job) => void;

  constructor(
    queueName: string,
    processor: string | URL | null | Processor | undefined,
    opts: WorkerOptions,
    Connection?: typeof RedisConnection,
  ) {
    super(queueName, processor, opts, Connection);
    // BullMQ drew an id of its own; it is first read when the worker runs (tokens, locks), after this
    Object.assign(this, { id: `${PRESENT_WORKER_PREFIX}${randomUUID()}` });
    this.createLockManager();
  }

  protected override async nextJobFromJobData(jobData?: JobJsonRaw, jobId?: string, token?: string): Promise<Job> {
    const job = await super.nextJobFromJobData(jobData, jobId, token);
    if (job) this.onTaken?.(job);
    return job;
  }
}
