import { Logger } from '@nestjs/common';
import { Job } from 'bullmq';
import { JobName, JobPayloads, KeptStep } from '@parley/agent';

/**
 * Keeps a step the model was paid for (its command, and the events its decision made) until its
 * events are in the log. The runner asks it before calling the model: a kept step for the same
 * step of the turn is recorded from its command instead, whatever stood in the way the first time
 * (a conflicting append, the database away, this process stopped). Kept in memory at once and in
 * the BullMQ job's data, so a retry of the job on any worker finds it; Postgres is no place for
 * it, as Postgres may be what is away. The write to the job goes out beside the append rather
 * than before it (the command handler tells the runner just before it appends): a crash before
 * either lands loses the step either way, and the turn's path waits one round trip instead of two.
 */
export interface StepKeeper {
  readonly kept: KeptStep | undefined;
  /** kept in memory when it returns; the returned promise says it is kept outside the process too */
  keep(step: KeptStep): Promise<void>;
  /** resolves once every step kept so far is written where it is kept */
  settled(): Promise<void>;
}

export class MemoryStepKeeper implements StepKeeper {
  kept: KeptStep | undefined;
  constructor(kept?: KeptStep) {
    this.kept = kept;
  }
  keep(step: KeptStep): Promise<void> {
    this.kept = step;
    return Promise.resolve();
  }
  settled(): Promise<void> {
    return Promise.resolve();
  }
}

type RunTurnJob = Job<JobPayloads[typeof JobName.RunTurn]>;

export class JobStepKeeper extends MemoryStepKeeper {
  private static readonly logger = new Logger('StepKeeper');

  constructor(private readonly job: RunTurnJob) {
    super(job.data.kept);
  }

  /** the job's writes, one after another, so a later step is never overwritten by an earlier one */
  private writes: Promise<void> = Promise.resolve();

  override keep(step: KeptStep): Promise<void> {
    void super.keep(step);
    this.writes = this.writes.then(() =>
      // Redis away: this process still holds it in memory and appends it when Postgres allows
      this.job.updateData({ ...this.job.data, kept: step }).catch((e: Error) => {
        JobStepKeeper.logger.warn(`job ${this.job.id}: answer kept in memory only (${e.message})`);
      }),
    );
    return this.writes;
  }

  override settled(): Promise<void> {
    return this.writes;
  }
}
