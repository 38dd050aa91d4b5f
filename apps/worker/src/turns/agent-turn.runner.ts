import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  AgentCommand,
  agentStepsDecider,
  isAbort,
  KeptStep,
  sleepUnlessAborted,
  LlmError,
  MODEL_TABLE,
  modelCallStopped,
  planTurn,
  PriceTable,
  StoppedAttempt,
  stoppedAttemptsOf,
  TurnRecord,
  TurnWait,
} from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { ConversationEvent, conversationStreamId, handleCommand, stamped } from '@parley/conversation';
import { backoffMs, EventStore, isTransientDbError, NewEvent, WrongExpectedVersionError } from '@parley/event-store';
import { ledgerRowOf, UsageLedger } from '@parley/read-models';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { MemoryStepKeeper, StepKeeper } from './step-keeper';
import { ConversationFolds, FoldedConversation, TurnView, turnViewOf } from './conversation-folds';
import { StepResult } from './model-reply';
import { TurnSteps, WorkStep } from './turn-steps';

/**
 * ended (with the conversation as this runner last folded it: what the sequencer and the batch
 * check need, without reading the stream again); waiting for an earlier turn; waiting for the
 * provider batch holding its model call; waiting for the turn before, which is cutting the
 * history this turn would otherwise cut; waiting for the reader's approval of a tool call; or handed back, the worker stopping before the turn
 * ended (its job goes back to the queue for another worker)
 */
export type TurnOutcome =
  | { kind: 'ended'; folded: FoldedConversation }
  | TurnWait
  | { kind: 'wait-model-batch'; providerBatchId: string }
  | { kind: 'wait-history-cut'; forTurnId: string }
  | { kind: 'wait-approval'; until?: string }
  | { kind: 'handed-back' };

const HANDED_BACK = { kind: 'handed-back' } as const;

/** The steps that buy a model call: kept in their job beside their append, so none is bought twice. */
const PAID_STEPS: ReadonlySet<string> = new Set([
  'call-llm',
  'cut-history',
  'reformulate',
  'answer',
  'answer-from-book',
]);

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

/** A kept step's command: what it did, or (kept by a release before 0.3) the events it made. */
const keptCommand = (kept: KeptStep, turnId: string): AgentCommand =>
  kept.command ?? { type: 'RecordKeptEvents', turnId, events: kept.events };

/**
 * Runs one agent turn as a fold of its conversation's stream: load, plan, do the next step, and
 * record what it did through the command handler (decided once, on the fold the step was planned
 * on, and appended at its version; decided again only when the log moved meanwhile), repeat.
 * Whatever crashed before, the log says where to go on; a step that no longer applies (the turn
 * ended, another worker recorded it) records nothing, and the next plan sees why.
 */
@Injectable()
export class AgentTurnRunner {
  private readonly logger = new Logger(AgentTurnRunner.name);
  private readonly ledger: UsageLedger;
  private readonly decide: ReturnType<typeof agentStepsDecider>;

  constructor(
    private readonly store: EventStore,
    private readonly folds: ConversationFolds,
    private readonly steps: TurnSteps,
    @Inject(CONFIG) private readonly config: AppConfig,
    /** prices the calls a step's events record */
    @Inject(MODEL_TABLE) private readonly prices: PriceTable,
    @Optional() private readonly metrics: WorkerMetrics = new WorkerMetrics(),
  ) {
    this.ledger = new UsageLedger(store.pool);
    this.decide = agentStepsDecider(prices);
  }

  async run(
    conversationId: string,
    turnId: string,
    signal: AbortSignal,
    keeper: StepKeeper = new MemoryStepKeeper(),
    /** whether a turn's job has yet to finish (it may still take the next turn's cut ahead) */
    stillRunning: (turnId: string) => Promise<boolean> = async () => false,
    /** a load of the conversation began after this turn's job was taken (ConversationFolds.readAhead): the first step starts from it */
    readAhead = false,
  ): Promise<TurnOutcome> {
    let outage = { tries: 0, since: 0 }; // consecutive transient database errors
    // after this worker's own append the next step starts from the fold in memory: the append at
    // the folded version proved nothing came between, and the next append at the new version proves it again
    let fromMemory = readAhead;
    for (;;) {
      try {
        // (an abort sends it to the log instead: a cancel is there for the next step to see)
        const folded =
          fromMemory && !signal.aborted
            ? await this.folds.latest(conversationId)
            : await this.folds.load(conversationId);
        fromMemory = false;
        if (folded.state.status === 'erased' && keeper.kept)
          await this.recordSpendOfErased(conversationId, keeper.kept.events);
        // no such turn in the fold: it ended long ago, or its conversation was erased
        const view = turnViewOf(folded, conversationId, turnId, signal, this.config);
        if (!view) return { kind: 'ended', folded };
        const step = planTurn(folded.turns, turnId, await this.steps.planContext(view));
        if (step.kind === 'ended') return { kind: 'ended', folded };
        if (step.kind === 'wait') return step;
        // a tool call waits for the reader: the job comes back when they answer (or at the expiry)
        if (step.kind === 'wait-approval') return step;
        // aborted, yet the log shows no ending (or no cut ahead): this worker is stopping; the job goes back to the queue
        if (signal.aborted) return HANDED_BACK;
        // the turn before may still take this cut ahead: wait for it rather than pay for the same
        // summary; a turn before without a running job (an earlier release's, a job long gone) leaves it to this one
        const cutter = step.kind === 'cut-history' ? step.mayBeCutAheadBy : undefined;
        if (cutter && (await stillRunning(cutter))) return { kind: 'wait-history-cut', forTurnId: cutter };
        const key = stepKey(view.turn, step);
        const kept = keeper.kept?.step === key ? keeper.kept : undefined;
        if (kept) this.metrics.keptStepReused();
        const done: StepResult = kept
          ? { kind: 'command', command: keptCommand(kept, turnId) }
          : await this.perform(view, step, signal);
        // the model call is in a provider batch that has not ended: the job comes back later
        if (done.kind === 'wait-model-batch') return done;
        // a step the model was paid for is kept, with the events its one decision made, beside their append
        const keep = !kept && PAID_STEPS.has(step.kind) ? { keeper, key } : undefined;
        const { events } = await this.record(view, done.command, keep);
        this.metrics.recorded(view.turn, events);
        fromMemory = events.length > 0;
        outage = { tries: 0, since: 0 };
      } catch (e) {
        // the stream kept moving past the handler's retries: re-read; a kept step is decided again on what is there
        if (e instanceof WrongExpectedVersionError) continue;
        if (isTransientDbError(e)) {
          if (signal.aborted) return HANDED_BACK; // stopping: a retry elsewhere finds the kept answer
          if (outage.tries++ === 0) outage.since = Date.now();
          await this.waitOutOutage(e, outage, turnId, signal);
          continue;
        }
        if (isAbort(e) || signal.aborted) continue; // the next load sees TurnCancelled (or hands the turn back)
        if (e instanceof LlmError) {
          if (e.providerDetail) this.logger.warn(`turn ${turnId}: the provider said (${e.code}): ${e.providerDetail}`);
          await this.fail(conversationId, turnId, e.code, e.message, e.retryable);
          continue;
        }
        throw e;
      }
    }
  }

  /**
   * The step's command through the one command path: decided on the fold the step was planned on
   * (should the log have moved, on the log), appended at its version, a lost race decided again.
   * A paid step is kept as the events are about to go out: its command, and the events its
   * decision made (what an erased conversation's ledger records of it).
   */
  private record(view: TurnView, command: AgentCommand, keep?: { keeper: StepKeeper; key: string }) {
    return handleCommand(this.store, this.folds, view.ctx.conversationId, [command], {
      decide: this.decide,
      correlationId: view.turn.turnId,
      decideFirstOn: view.folded,
      beforeAppend: (events) => {
        if (keep && keep.keeper.kept?.step !== keep.key) void keep.keeper.keep({ step: keep.key, command, events });
      },
    });
  }

  /** Does one step; a model call stopped midway is recorded for what it was billed. */
  private async perform(view: TurnView, step: WorkStep, signal: AbortSignal): Promise<StepResult> {
    try {
      return await this.steps.perform(view, step, signal);
    } catch (e) {
      // cancelled, aborted or failed midway: what the provider billed is recorded all the same
      await this.recordStopped(view, stepIteration(view.turn, step), stoppedAttemptsOf(e));
      throw e;
    }
  }

  /**
   * ModelCallStopped for a call's billed attempts (RecordStoppedCall), at the version found (the
   * reader's cancel has moved it). A failure here is logged, never the turn's. An erased
   * conversation takes no more events: the attempts go straight to the usage ledger.
   */
  private async recordStopped(view: TurnView, iteration: number, attempts: StoppedAttempt[]): Promise<void> {
    if (attempts.length === 0) return;
    const { conversationId } = view.ctx;
    const { turnId } = view.turn;
    try {
      const { folded } = await this.record(view, { type: 'RecordStoppedCall', turnId, iteration, attempts });
      if (folded.state.status !== 'erased') return;
      const ownerId = view.folded.state.ownerId ?? undefined;
      const events = stamped(modelCallStopped(this.prices, turnId, iteration, attempts), { userId: ownerId });
      await this.recordSpendOfErased(conversationId, events);
    } catch (e) {
      this.logger.warn(`turn ${turnId}: stopped model call not recorded (${(e as Error).message})`);
    }
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
    await sleepUnlessAborted(backoffMs(outage.tries, DB_RETRY_MAX_MS), signal);
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
}
