import { BeforeApplicationShutdown, Inject, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { DelayedError, Job, WaitingError } from 'bullmq';
import { AGENT_TURNS_QUEUE, JobName, JobPayloads } from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { AgentTurnRunner, TurnHandedBack } from './agent-turn.runner';
import { RunningTurns } from './running-turns';
import { JobStepKeeper } from './step-keeper';
import { TurnSequencer } from './turn-sequencer';

/**
 * Lock and stall settings, tuned for recovery after a worker is killed mid-turn: a lost lock
 * expires after LOCK_MS and the stalled-job check runs every STALLED_INTERVAL_MS, so another
 * worker picks the turn up within ~LOCK_MS + STALLED_INTERVAL_MS. The lock is renewed every
 * LOCK_MS / 2 by a live worker, so a long LLM call never looks stalled.
 */
export const LOCK_MS = 10_000;
export const STALLED_INTERVAL_MS = 5_000;
export const TURN_ATTEMPTS = 5;

@Processor(AGENT_TURNS_QUEUE, {
  lockDuration: LOCK_MS,
  stalledInterval: STALLED_INTERVAL_MS,
  maxStalledCount: 10,
  autorun: false,
})
export class AgentTurnsProcessor extends WorkerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(AgentTurnsProcessor.name);

  constructor(
    private readonly runner: AgentTurnRunner,
    private readonly running: RunningTurns,
    private readonly sequencer: TurnSequencer,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    if (!this.config.worker.agentEnabled) return; // a projections-only worker
    this.worker.concurrency = this.config.worker.concurrency;
    this.worker.run().catch((e: Error) => this.logger.error(`agent worker stopped: ${e.message}`));
  }

  /**
   * A deploy's SIGTERM: take no new job, let the turns in hand finish (their model calls are
   * paid for), and only after the grace period abort the rest, which go back to the queue with
   * any answer already bought kept in their jobs.
   */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.config.worker.agentEnabled) return;
    const closed = this.worker.close();
    const grace = this.config.worker.shutdownGraceMs;
    let timer: NodeJS.Timeout | undefined;
    const graceOver = await Promise.race([
      closed.then(() => false),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(true), grace))),
    ]);
    clearTimeout(timer);
    if (graceOver) {
      this.logger.warn(`shutdown grace of ${grace} ms is over: handing ${this.running.size} turn(s) back`);
      this.running.abortAll();
      await closed;
    }
  }

  /** One handler per job name; the mapped type makes a job without a handler a build error. */
  private readonly handlers: { [N in keyof JobPayloads]: (job: Job<JobPayloads[N]>, token?: string) => Promise<void> } =
    {
      [JobName.RunTurn]: (job, token) => this.runTurn(job, token),
    };

  async process(job: Job, token?: string): Promise<void> {
    const handler = this.handlers[job.name as keyof JobPayloads];
    if (!handler) throw new Error(`no handler for job ${job.name}`); // a job from a newer build
    return handler(job, token);
  }

  private async runTurn(job: Job<JobPayloads[typeof JobName.RunTurn]>, token?: string): Promise<void> {
    const { conversationId, turnId } = job.data;
    const keeper = new JobStepKeeper(job);
    const outcome = await this.running.track(conversationId, turnId, async (signal) => {
      try {
        return await this.runner.run(conversationId, turnId, signal, keeper);
      } catch (e) {
        if (e instanceof TurnHandedBack) return { kind: 'handed-back' as const };
        const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
        if (lastAttempt)
          await this.runner.fail(conversationId, turnId, 'internal_error', String((e as Error)?.message ?? e), true);
        throw e;
      }
    });
    if (outcome.kind === 'handed-back') {
      // not a failure: another worker takes it at once, without spending one of its attempts
      await job.moveToWait(token);
      throw new WaitingError();
    }
    if (outcome.kind === 'wait') {
      // an earlier turn of this conversation is still running: come back when it ends (or soon)
      await job.moveToDelayed(Date.now() + 1_000, token);
      throw new DelayedError();
    }
    await this.sequencer.promoteNext(conversationId);
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, error: Error): void {
    if (job) this.logger.warn(`job ${job.id} failed (attempt ${job.attemptsMade}): ${error.message}`);
  }
}
