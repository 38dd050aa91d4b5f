import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  isAbort,
  LlmError,
  modelCallStopped,
  planTurn,
  StoppedAttempt,
  stoppedAttemptsOf,
  TurnRecord,
  TurnStep,
  TurnWait,
} from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { ConversationEvent, conversationStreamId, findTurn, handleCommand } from '@parley/conversation';
import {
  backoffMs,
  EventStore,
  isTransientDbError,
  NewEvent,
  StoredEvent,
  WrongExpectedVersionError,
} from '@parley/event-store';
import { ledgerRowOf, UsageLedger } from '@parley/read-models';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { MemoryStepKeeper, StepKeeper } from './step-keeper';
import { ConversationFolds, FoldedConversation, LoadedTurn, turnOf } from './conversation-folds';
import { replyCallId, StepResult } from './model-reply';
import { TurnBudget } from './turn-budget';
import { TurnSteps } from './turn-steps';

/**
 * ended (with the conversation as this runner last folded it: what the sequencer and the batch
 * check need, without reading the stream again); waiting for an earlier turn; waiting for the
 * provider batch holding its model call; waiting for the turn before, which is cutting the
 * history this turn would otherwise cut; or handed back, the worker stopping before the turn
 * ended (its job goes back to the queue for another worker)
 */
export type TurnOutcome =
  | { kind: 'ended'; folded: FoldedConversation }
  | TurnWait
  | { kind: 'wait-model-batch'; providerBatchId: string }
  | { kind: 'wait-history-cut'; forTurnId: string }
  | { kind: 'handed-back' };

const HANDED_BACK = { kind: 'handed-back' } as const;

const DB_RETRY_MAX_MS = 2_000;

/**
 * Which step of which turn: the key a kept answer is filed under. A step sent to a provider batch
 * is made twice (the submission, then the answer), told apart by how many batches the turn holds.
 */
export function stepKey(turn: TurnRecord, step: { kind: string; iteration?: number }): string {
  const iteration = stepIteration(turn, step);
  const submitted = Object.keys(turn.modelBatches ?? {}).length;
  return `${turn.turnId}/${step.kind}/${iteration}${submitted ? `+${submitted}` : ''}`;
}

/** The model call of the turn a step makes (1 for the calls before the first: a query, a summary). */
const stepIteration = (turn: TurnRecord, step: { kind: string; iteration?: number }): number =>
  step.kind === 'answer' ? turn.iterations.length + 1 : (step.iteration ?? 1);

/** Whether a step pays for a model call: not running tools, nor collecting an answer a provider batch holds. */
function buysModelCall(turn: TurnRecord, step: Exclude<TurnStep, { kind: 'ended' } | TurnWait>): boolean {
  if (step.kind === 'run-tools') return false;
  return !turn.modelBatches?.[replyCallId(turn.turnId, stepIteration(turn, step))];
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Runs one agent turn as a fold of its conversation's stream: load, fold, do the next step,
 * append it at the folded version, repeat. Whatever crashed before, the log says where to go on;
 * a worker that loses an append race re-reads and finds the turn moved on (or ended).
 */
@Injectable()
export class AgentTurnRunner {
  private readonly logger = new Logger(AgentTurnRunner.name);
  private readonly ledger: UsageLedger;
  private readonly budget: TurnBudget;

  constructor(
    private readonly store: EventStore,
    private readonly folds: ConversationFolds,
    private readonly steps: TurnSteps,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Optional() private readonly metrics: WorkerMetrics = new WorkerMetrics(),
  ) {
    this.ledger = new UsageLedger(store.pool);
    this.budget = new TurnBudget(store, config);
  }

  async run(
    conversationId: string,
    turnId: string,
    signal: AbortSignal,
    keeper: StepKeeper = new MemoryStepKeeper(),
    /** whether a turn's job has yet to finish (it may still take the next turn's cut ahead) */
    stillRunning: (turnId: string) => Promise<boolean> = async () => false,
    /** the conversation as the caller loaded it just now (for the turn's trace): the first step starts from it */
    justLoaded?: FoldedConversation,
  ): Promise<TurnOutcome> {
    let outage = { tries: 0, since: 0 }; // consecutive transient database errors
    // after this worker's own append the next step starts from memory: the append at the folded
    // version proved nothing came between, and the next append at the new version proves it again
    let afterOwnAppend: FoldedConversation | undefined = justLoaded;
    for (;;) {
      try {
        // (an abort sends it to the log instead: a cancel is there for the next step to see)
        const folded = afterOwnAppend && !signal.aborted ? afterOwnAppend : await this.folds.load(conversationId);
        const loaded = turnOf(folded, conversationId, turnId, signal, this.config);
        afterOwnAppend = undefined;
        const step = planTurn(loaded.turns, turnId, await this.steps.planContext(loaded));
        if (loaded.erased && keeper.kept) await this.recordSpendOfErased(conversationId, keeper.kept.events);
        if (step.kind === 'ended') return { kind: 'ended', folded };
        if (step.kind === 'wait') return step;
        // aborted, yet the log shows no ending (or no cut ahead): this worker is stopping; the job goes back to the queue
        if (signal.aborted) return HANDED_BACK;
        // the turn before may still take this cut ahead: wait for it rather than pay for the same
        // summary; a turn before without a running job (an earlier release's, a job long gone) leaves it to this one
        const cutter = step.kind === 'cut-history' ? step.mayBeCutAheadBy : undefined;
        if (cutter && (await stillRunning(cutter))) return { kind: 'wait-history-cut', forTurnId: cutter };
        const key = stepKey(loaded.turn!, step);
        const kept = keeper.kept?.step === key ? keeper.kept.events : undefined;
        if (kept) this.metrics.keptStepReused();
        else if (buysModelCall(loaded.turn!, step)) await this.budget.assertCanCall(loaded.ownerId, loaded.turn!);
        const done = kept
          ? { kind: 'events' as const, events: kept }
          : await this.perform(loaded, step, signal, keeper, key);
        // the model call is in a provider batch that has not ended: the job comes back later
        if (done.kind === 'wait-model-batch') return done;
        const { events } = done;
        const appended = await this.append(conversationId, loaded.version, events);
        this.metrics.recorded(loaded.turn, events);
        afterOwnAppend = appended && this.folds.appended(conversationId, appended);
        outage = { tries: 0, since: 0 };
      } catch (e) {
        // the stream moved on (a follow-up message, a rename): re-read; a kept answer is appended at the new version
        if (e instanceof WrongExpectedVersionError) continue;
        if (isTransientDbError(e)) {
          if (signal.aborted) return HANDED_BACK; // stopping: a retry elsewhere finds the kept answer
          if (outage.tries++ === 0) outage.since = Date.now();
          await this.waitOutOutage(e, outage, turnId, signal);
          continue;
        }
        if (isAbort(e) || signal.aborted) continue; // the next load sees TurnCancelled (or hands the turn back)
        if (e instanceof LlmError) {
          await this.fail(conversationId, turnId, e.code, e.message, e.retryable);
          continue;
        }
        throw e;
      }
    }
  }

  /** Does one step; a step that called the model is kept (in memory now, in the job beside its append). */
  private async perform(
    loaded: LoadedTurn,
    step: Exclude<TurnStep, { kind: 'ended' } | TurnWait>,
    signal: AbortSignal,
    keeper: StepKeeper,
    key: string,
  ): Promise<StepResult> {
    if (step.kind === 'run-tools') return this.steps.runTools(loaded, step.calls);
    let done: StepResult;
    try {
      done =
        step.kind === 'call-llm'
          ? await this.steps.callLlm(loaded, step.iteration, step.allowTools, signal)
          : step.kind === 'cut-history'
            ? await this.steps.cutHistory(loaded, step, signal)
            : step.kind === 'reformulate'
              ? await this.steps.reformulate(loaded, signal)
              : step.kind === 'answer-from-book'
                ? await this.steps.answerFromBook(loaded, step.iteration, signal)
                : await this.steps.answerFromPassages(loaded, signal);
    } catch (e) {
      // cancelled, aborted or failed midway: what the provider billed is recorded all the same
      await this.recordStopped(
        loaded.ctx.conversationId,
        { turnId: loaded.turn!.turnId, ownerId: loaded.ownerId },
        stepIteration(loaded.turn!, step),
        stoppedAttemptsOf(e),
      );
      throw e;
    }
    if (done.kind === 'events') void keeper.keep({ step: key, events: done.events });
    return done;
  }

  /**
   * ModelCallStopped for a call's billed attempts, at the version found (the reader's cancel has
   * moved it). A failure here is logged, never the turn's. An erased conversation takes no more
   * events: the attempts go straight to the usage ledger.
   */
  private async recordStopped(
    conversationId: string,
    { turnId, ownerId }: { turnId: string; ownerId: string | null },
    iteration: number,
    attempts: StoppedAttempt[],
  ): Promise<void> {
    if (attempts.length === 0) return;
    for (let tries = 0; tries < 5; tries++) {
      try {
        const f = await this.folds.load(conversationId);
        if (f.state.status === 'erased') {
          const at = { ownerId, lastEventId: undefined };
          return await this.recordSpendOfErased(conversationId, modelCallStopped(at, turnId, iteration, attempts));
        }
        if (f.state.status !== 'active') return;
        const cancelled = findTurn(f.state, turnId)?.status === 'cancelled';
        const at = { ownerId: f.state.ownerId, lastEventId: f.lastEventId };
        await this.append(conversationId, f.version, modelCallStopped(at, turnId, iteration, attempts, { cancelled }));
        return;
      } catch (e) {
        if (e instanceof WrongExpectedVersionError) continue; // the ids are the same: a repeat adds nothing
        this.logger.warn(`turn ${turnId}: stopped model call not recorded (${(e as Error).message})`);
        return;
      }
    }
    this.logger.warn(`turn ${turnId}: stopped model call not recorded (the stream kept moving)`);
  }

  /**
   * Paid-for events that found their conversation erased (a kept answer, a stopped call): the
   * money goes to the usage ledger under the ids the events would have had, so a line the
   * erasure already wrote from the log is not written twice. The owner is in their metadata.
   */
  private async recordSpendOfErased(conversationId: string, events: NewEvent<ConversationEvent>[]): Promise<void> {
    const streamId = conversationStreamId(conversationId);
    const lines = events.flatMap(
      (e) => ledgerRowOf({ ...e, streamId, version: null, occurredAt: new Date() }, e.metadata?.userId ?? null) ?? [],
    );
    await this.ledger.record(lines);
  }

  /** Postgres is away: back off and try again, holding the turn (its job lock lives in Redis). */
  private async waitOutOutage(
    e: unknown,
    outage: { tries: number; since: number },
    turnId: string,
    signal: AbortSignal,
  ): Promise<void> {
    if (outage.tries === 1)
      this.logger.warn(`turn ${turnId}: database unavailable, retrying (${(e as Error).message})`);
    if (Date.now() - outage.since > this.config.worker.dbOutageMaxMs) throw e; // BullMQ retries the job later
    await abortableSleep(backoffMs(outage.tries, DB_RETRY_MAX_MS), signal);
  }

  /** Records TurnFailed unless the turn already ended (FailTurn, through the one command path). */
  async fail(conversationId: string, turnId: string, code: string, message: string, retryable: boolean): Promise<void> {
    try {
      const { events, folded } = await handleCommand(
        this.store,
        this.folds,
        conversationId,
        [{ type: 'FailTurn', userId: null, turnId, code, message, retryable }],
        { correlationId: turnId, retries: 4 },
      );
      if (events.length === 0) return;
      this.logger.warn(`turn ${turnId} failed: ${code} ${message}`);
      this.metrics.turnEnded('failed', code, folded.turns.find((t) => t.turnId === turnId)?.postedAt);
    } catch (e) {
      if (!(e instanceof WrongExpectedVersionError)) throw e;
    }
  }

  /** Appends at the folded version; the events as stored (none when there was nothing to append). */
  private async append(
    conversationId: string,
    expectedVersion: number,
    events: NewEvent<ConversationEvent>[],
  ): Promise<StoredEvent<ConversationEvent>[] | undefined> {
    if (events.length === 0) return undefined;
    return (await this.store.append(conversationStreamId(conversationId), events, { expectedVersion })).events;
  }
}
