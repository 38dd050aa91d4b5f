import { BeforeApplicationShutdown, Inject, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { DelayedError, Job, WaitingError } from 'bullmq';
import { Context, Link, SpanKind } from '@opentelemetry/api';
import { AGENT_TURNS_QUEUE, JobName, JobPayloads, queuedTurnRecheckMs } from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { contextOf, recordError, spanContextOf, tracer } from '@parley/event-store';
import { AgentTurnRunner } from './agent-turn.runner';
import { RunningTurns } from './running-turns';
import { JobStepKeeper } from './step-keeper';
import { TurnSequencer } from './turn-sequencer';
import { BatchCompleter } from './batch-completer';
import { EventLoopWatch } from './event-loop-watch';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { ConversationFolds, FoldedConversation } from './conversation-folds';
import { TakingWorker } from './taking-worker';
import { OrphanedLocks } from './orphaned-locks';

/**
 * Lock and stall settings. A killed worker's turns move to another within a second of the kill:
 * OrphanedLocks hands back the turns of a worker whose presence connection to Redis is gone. The
 * lock's expiry, and the stalled check (every STALLED_INTERVAL_MS) that moves a turn whose lock
 * lapsed, are only the net for a worker stuck with its connection open (or one of 0.3.0), so the
 * lock is long: a live worker keeps its turns unless its event loop stalls past LOCK_MARGIN_MS
 * (the taker would pay for the model call in flight again). docs/operations.md ("A worker
 * killed") has the timings.
 */
export const LOCK_MS = 15_000;
export const LOCK_RENEW_MS = 2_000;
export const STALLED_INTERVAL_MS = 500;
export const LOCK_MARGIN_MS = LOCK_MS - LOCK_RENEW_MS;
export const EVENT_LOOP_WARN_MS = 1_000;

/** What a reader is told of a turn that failed on the server: the cause is in the log, not in the event. */
const INTERNAL_FAILURE_MESSAGE = 'The turn failed on the server; the operator can find why in its log. Try again.';

/** A turn waiting for the cut the turn before takes ahead looks again this often (unless promoted sooner). */
export const HISTORY_CUT_RECHECK_MS = 500;

/**
 * A turn waiting for the reader's approval looks again at its expiry, and at least every 10
 * minutes: the reader's answer promotes its job at once, so this is the net for a promotion lost
 * (Redis away when the API tried).
 */
export const APPROVAL_RECHECK_MAX_MS = 10 * 60_000;
export const approvalRecheckMs = (until: string | undefined, now = Date.now()): number =>
  until === undefined
    ? APPROVAL_RECHECK_MAX_MS
    : Math.min(APPROVAL_RECHECK_MAX_MS, Math.max(0, Date.parse(until) - now));

@Processor(AGENT_TURNS_QUEUE, {
  lockDuration: LOCK_MS,
  lockRenewTime: LOCK_RENEW_MS,
  stalledInterval: STALLED_INTERVAL_MS,
  maxStalledCount: 10,
  autorun: false,
})
export class AgentTurnsProcessor extends WorkerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(AgentTurnsProcessor.name);
  private readonly eventLoop = new EventLoopWatch(this.logger, EVENT_LOOP_WARN_MS, LOCK_MARGIN_MS);

  constructor(
    private readonly runner: AgentTurnRunner,
    private readonly running: RunningTurns,
    private readonly sequencer: TurnSequencer,
    private readonly batches: BatchCompleter,
    private readonly folds: ConversationFolds,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly metrics: WorkerMetrics,
    private readonly orphanedLocks: OrphanedLocks,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    if (!this.config.worker.agentEnabled) return; // a projections-only worker
    this.worker.concurrency = this.config.worker.concurrency;
    if (this.worker instanceof TakingWorker) this.worker.onTaken = (job) => this.readAhead(job);
    this.eventLoop.start();
    this.logger.log(
      `agent worker ${this.worker.id}: concurrency ${this.worker.concurrency}, lock ${LOCK_MS} ms renewed every ${LOCK_RENEW_MS / 2}-${LOCK_RENEW_MS} ms, stalled check every ${STALLED_INTERVAL_MS} ms`,
    );
    // present before it takes a turn: another worker would take a turn whose holder it cannot see
    this.orphanedLocks
      .start(this.worker.id)
      .then(() => this.worker.run())
      .catch((e: Error) => this.logger.error(`agent worker stopped: ${e.message}`));
  }

  /**
   * A deploy's SIGTERM: take no new job, let the turns in hand finish (their model calls are
   * paid for), and only after the grace period abort the rest, which go back to the queue with
   * any answer already bought kept in their jobs.
   */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.config.worker.agentEnabled) return;
    this.eventLoop.stop();
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

  /**
   * Jobs this worker gave back (moved to delayed or wait) and has not started again: their locks
   * are gone on purpose, and a renewal tick that runs before BullMQ stops tracking them reports
   * them as lost. Those reports are not losses. Kept a few lock periods, then forgotten.
   */
  private readonly givenBack = new Map<string, number>();

  private giveBack(jobId: string): void {
    const now = Date.now();
    for (const [id, at] of this.givenBack) if (now - at > 3 * LOCK_MS) this.givenBack.delete(id);
    this.givenBack.set(jobId, now);
  }

  /**
   * Whether each turn's conversation is read as its job is taken (TakingWorker tells of every job
   * before it starts): BullMQ starts a job a Redis round trip after taking it, and the run starts
   * from that read (ConversationFolds.latest). The read begins after this worker took the job, so
   * it sees every step an earlier run of the job appended (that run had ended).
   */
  private get readsAhead(): boolean {
    return this.worker instanceof TakingWorker;
  }

  private readAhead(job: Job): void {
    if (job.name !== JobName.RunTurn) return;
    this.folds.readAhead((job.data as JobPayloads[typeof JobName.RunTurn]).conversationId);
  }

  async process(job: Job, token?: string): Promise<void> {
    if (job.id) this.givenBack.delete(job.id);
    const handler = this.handlers[job.name as keyof JobPayloads];
    if (!handler) throw new Error(`no handler for job ${job.name}`); // a job from a newer build
    return handler(job, token);
  }

  /**
   * The job's run as a `process agent-turns` span in the turn's trace. The trace comes from the
   * log (the turn's UserMessagePosted), so a turn resumed after a crash, a deploy or a Redis that
   * lost its jobs continues it; under the span that queued the job when that is in the same trace,
   * else linked to it. A job given back (delayed, waiting) is not a failure of the span.
   */
  private async runTurn(job: Job<JobPayloads[typeof JobName.RunTurn]>, token?: string): Promise<void> {
    const { conversationId, turnId } = job.data;
    const { parent, links } = await this.traceOf(job);
    const attributes = {
      'messaging.system': 'bullmq',
      'messaging.operation.type': 'process',
      'messaging.destination.name': AGENT_TURNS_QUEUE,
      'messaging.message.id': job.id ?? '',
      'parley.conversation.id': conversationId,
      'parley.turn.id': turnId,
      'parley.job.attempt': job.attemptsMade + 1,
    };
    const options = { kind: SpanKind.CONSUMER, attributes, links };
    return tracer.startActiveSpan(`process ${AGENT_TURNS_QUEUE}`, options, parent, async (span) => {
      try {
        return await this.runTurnJob(job, token);
      } catch (e) {
        if (e instanceof DelayedError || e instanceof WaitingError) span.setAttribute('parley.turn.outcome', 'later');
        else recordError(span, e);
        throw e;
      } finally {
        span.end();
      }
    });
  }

  /**
   * The parent of a run's span: the turn's trace from the log, the job's enqueue when it is in it.
   * The conversation is read as the run would (the read ahead, else a load), so the run reads no
   * more for it.
   */
  private async traceOf(job: Job<JobPayloads[typeof JobName.RunTurn]>): Promise<{ parent: Context; links: Link[] }> {
    if (!this.config.tracing) return { parent: contextOf(undefined), links: [] };
    const { conversationId, turnId, traceparent: queuedBy } = job.data;
    const folded = await (this.readsAhead ? this.folds.latest(conversationId) : this.folds.load(conversationId)).catch(
      () => undefined, // the run finds out what is wrong
    );
    const logged = folded?.turns.find((t) => t.turnId === turnId)?.traceparent;
    const [fromLog, fromJob] = [spanContextOf(logged), spanContextOf(queuedBy)];
    if (fromJob && (!fromLog || fromJob.traceId === fromLog.traceId)) return { parent: contextOf(queuedBy), links: [] };
    return { parent: contextOf(logged), links: fromJob ? [{ context: fromJob }] : [] };
  }

  private async runTurnJob(job: Job<JobPayloads[typeof JobName.RunTurn]>, token: string | undefined): Promise<void> {
    const { conversationId, turnId } = job.data;
    const keeper = new JobStepKeeper(job);
    const outcome = await this.running.track(conversationId, turnId, async (signal) => {
      try {
        return await this.runner.run(
          conversationId,
          turnId,
          signal,
          keeper,
          (id) => this.sequencer.isUnfinished(conversationId, id),
          // a load began after the job was taken: read ahead, or for the run's trace
          this.readsAhead || !!this.config.tracing,
        );
      } catch (e) {
        const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
        // what went wrong is for the log (BullMQ keeps it as the job's failedReason); the reader gets Parley's words
        if (lastAttempt)
          await this.runner.fail(conversationId, turnId, 'internal_error', INTERNAL_FAILURE_MESSAGE, true);
        throw e;
      } finally {
        // the job moves on (or drops its kept answer) only after its writes have landed
        await keeper.settled();
      }
    });
    switch (outcome.kind) {
      case 'handed-back':
        // not a failure: another worker takes it at once, without spending one of its attempts
        this.giveBack(job.id!);
        await job.moveToWait(token);
        throw new WaitingError();
      case 'wait':
        // an earlier turn of this conversation is still running: the sequencer wakes this one when it ends
        await this.comeBackIn(job, queuedTurnRecheckMs(outcome.behind), token);
        await this.sequencer.promoteIfNext(conversationId, turnId, job);
        throw new DelayedError();
      case 'wait-history-cut':
        // the turn before is summarising the history for this one: its job promotes this one when done
        await this.comeBackIn(job, HISTORY_CUT_RECHECK_MS, token);
        throw new DelayedError();
      case 'wait-model-batch':
        // hours, perhaps: the worker's slot is free meanwhile, and the log says which batch to look at
        await this.comeBackIn(job, this.config.llm.batchPollMs, token);
        throw new DelayedError();
      case 'wait-approval':
        // for as long as the reader takes: no worker slot is held; their answer promotes the job,
        // and the expiry, if any, brings it back to deny
        await this.comeBackIn(job, approvalRecheckMs(outcome.until), token);
        throw new DelayedError();
      case 'ended':
        return this.turnEnded(job, outcome.folded);
      default: {
        const unknown: never = outcome;
        throw new Error(`turn outcome ${JSON.stringify(unknown)} has no handling`);
      }
    }
  }

  /** Gives the job back until `ms` from now (its lock goes with it, on purpose). */
  private async comeBackIn(job: Job, ms: number, token: string | undefined): Promise<void> {
    this.giveBack(job.id!);
    await job.moveToDelayed(Date.now() + ms, token);
  }

  /** The turn ended: the next turn of its conversation goes, and its batch completes if it was the last. */
  private async turnEnded(job: Job<JobPayloads[typeof JobName.RunTurn]>, folded: FoldedConversation): Promise<void> {
    const { conversationId, turnId } = job.data;
    this.metrics.jobEnded(folded, turnId);
    if (folded.state.status === 'erased') {
      // a kept answer must not outlive its conversation in Redis; the erasure sweep removes the job
      await job.updateData({ conversationId, turnId }).catch(() => undefined);
      return;
    }
    await this.sequencer.promoteNext(conversationId, folded);
    // the last turn of a batch to end completes it (the sweep does, if this worker dies first)
    await this.batches.turnEnded(turnId, folded).catch((e: Error) => {
      this.logger.warn(`batch check after turn ${turnId} failed: ${e.message}`);
    });
  }

  /** This worker's stalled check found a turn whose lock lapsed: its worker died (or stalled past the margin). */
  @OnWorkerEvent('stalled')
  onStalled(jobId: string): void {
    this.logger.warn(`job ${jobId} stalled: its lock lapsed, so it goes back to the queue for another worker`);
  }

  /** This worker lost a lock it still holds: its event loop or Redis was away longer than the margin. */
  @OnWorkerEvent('lockRenewalFailed')
  onLockRenewalFailed(failed: string[]): void {
    const jobIds = failed.filter((id) => !this.givenBack.has(id));
    if (jobIds.length === 0) return;
    this.logger.warn(
      `lost the lock of job(s) ${jobIds.join(', ')} (worst event loop stall ${Math.round(this.eventLoop.worst)} ms); another worker may take them`,
    );
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, error: Error): void {
    if (job) this.logger.warn(`job ${job.id} failed (attempt ${job.attemptsMade}): ${error.message}`);
  }
}
