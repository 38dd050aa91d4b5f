import { Job, Queue } from 'bullmq';
import { ErasureRepository, JobRef } from './erasure.repository';

/**
 * Removes from Redis the BullMQ jobs of erased data (waiting, delayed, completed or failed), as
 * listed by the erasures. A job that is running cannot be removed: it stays listed, and a later
 * pass (the worker's erasure sweep) removes it once it has ended.
 */
export class ErasedJobs {
  constructor(
    private readonly repo: ErasureRepository,
    private readonly queues: Map<string, Queue>,
  ) {}

  /** Removes what it can of the listed jobs; how many are still listed (running). */
  async removePending(limit = 500): Promise<number> {
    const pending = await this.repo.pendingJobs(limit);
    const removed: JobRef[] = [];
    for (const ref of pending) if (await this.remove(ref)) removed.push(ref);
    await this.repo.jobsRemoved(removed);
    return pending.length - removed.length;
  }

  private async remove(ref: JobRef): Promise<boolean> {
    const queue = this.queues.get(ref.queue);
    if (!queue) return false; // a queue this process does not hold: another one removes it
    const job = await Job.fromId(queue, ref.jobId);
    if (!job) return true;
    if ((await job.getState()) === 'active') return false;
    try {
      await job.remove();
      return true;
    } catch {
      return false; // taken by a worker meanwhile
    }
  }
}
