import { Job, RedisClient, Worker } from 'bullmq';

/**
 * BullMQ's Worker, telling a listener when it has taken a job from the queue. Woken for a job,
 * BullMQ looks for the next one (a Redis round trip) before it starts the one it took; a listener
 * can begin that job's own reads meanwhile. Jobs it takes as it finishes another are not told:
 * they start at once. Installed as the Nest BullModule's worker class (worker.module.ts).
 */
export class TakingWorker extends Worker {
  onTaken?: (job: Job) => void;

  protected override async moveToActive(client: RedisClient, token: string, name?: string): Promise<Job> {
    const job = await super.moveToActive(client, token, name);
    if (job) this.onTaken?.(job);
    return job;
  }
}
