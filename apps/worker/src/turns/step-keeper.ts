import { Logger } from '@nestjs/common';
import { Job } from 'bullmq';
import { JobName, JobPayloads, KeptStep } from '@parley/agent';

/**
 * Keeps the events of a step the model was paid for until they are in the log. The runner asks
 * it before calling the model: a kept step for the same turn and iteration is appended as it is,
 * whatever stood in the way the first time (a conflicting append, the database away, this
 * process stopped). Kept in memory and in the BullMQ job's data, so a retry of the job on any
 * worker finds it; Postgres is no place for it, as Postgres may be what is away.
 */
export interface StepKeeper {
  readonly kept: KeptStep | undefined;
  keep(step: KeptStep): Promise<void>;
}

export class MemoryStepKeeper implements StepKeeper {
  kept: KeptStep | undefined;
  constructor(kept?: KeptStep) {
    this.kept = kept;
  }
  async keep(step: KeptStep): Promise<void> {
    this.kept = step;
  }
}

type RunTurnJob = Job<JobPayloads[typeof JobName.RunTurn]>;

export class JobStepKeeper extends MemoryStepKeeper {
  private static readonly logger = new Logger('StepKeeper');

  constructor(private readonly job: RunTurnJob) {
    super(job.data.kept);
  }

  override async keep(step: KeptStep): Promise<void> {
    await super.keep(step);
    // Redis away: this process still holds it in memory and appends it when Postgres allows
    await this.job.updateData({ ...this.job.data, kept: step }).catch((e: Error) => {
      JobStepKeeper.logger.warn(`job ${this.job.id}: answer kept in memory only (${e.message})`);
    });
  }
}
