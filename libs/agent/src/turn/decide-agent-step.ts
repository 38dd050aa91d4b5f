import { randomUUID } from 'node:crypto';
import { ConversationEvent, DecidedEvent, findTurn, FoldedForCommands, SearchedInstead } from '@parley/conversation';
import { NewEvent } from '@parley/event-store';
import { ChatResult, StoppedAttempt } from '../llm/llm.types';
import { PriceTable } from '../llm/price-table';
import {
  CitedAnswer,
  CutVersions,
  historySummarized,
  historyTrimmed,
  modelBatchSubmitted,
  modelCallStopped,
  modelReplied,
  searchesInvoked,
  StepMade,
  ToolOutcome,
  toolResultsRecorded,
  approvalsExpired,
  approvalsRequested,
} from './agent-events';
import { isComplete, ToolCallRecord, TurnRecord } from './turn-fold';

/**
 * The agent's commands: what a step of a turn did, to be recorded. The worker does the step's
 * I/O (calls the model, runs the tools) and says what came of it as one of these; the decider
 * checks it still applies to the turn as the log stands and makes its events; the command
 * handler appends them. Plain data, so a step paid for is kept in its job and decided again.
 */
export type AgentCommand =
  | (StepCommand & {
      type: 'RecordModelReply';
      iteration: number;
      /** false on the last allowed call: whatever it asked for, it is the answer */
      allowTools: boolean;
      result: ChatResult;
      /** whole-book retrieval: the answer as the provider cited the documents sent */
      cited?: CitedAnswer;
      /** the policy asked for `whole-book` and the turn searched: why (recorded on the answer) */
      searchedInstead?: SearchedInstead;
    })
  | (StepCommand & {
      type: 'RecordModelBatchSubmission';
      submitted: { step: string; provider: string; providerBatchId: string };
    })
  | (StepCommand & { type: 'RecordToolResults'; outputs: ToolOutcome[] })
  | (StepCommand & { type: 'RecordSearches'; reformulated: ChatResult; hyde: ChatResult | null })
  | (StepCommand & { type: 'RecordSummary'; cut: CutVersions; result: ChatResult })
  | (StepCommand & {
      type: 'RecordTrimmedHistory';
      cut: CutVersions;
      failure: { code: string; message: string; stoppedAttempts: StoppedAttempt[] };
    })
  /** tool calls that need the reader's approval, asked (expiresAt: when they are denied unanswered) */
  | (StepCommand & { type: 'RequestToolApprovals'; calls: ToolCallRecord[]; expiresAt?: string })
  /** approvals that expired unanswered, denied */
  | (StepCommand & { type: 'ExpireToolApprovals'; toolCallIds: string[] })
  /** what a model call that stopped midway (cancelled, aborted, broken) was billed */
  | { type: 'RecordStoppedCall'; turnId: string; iteration: number; attempts: StoppedAttempt[] }
  /** a step a release before 0.3 kept in its job as events: recorded as they are, if the turn still needs them */
  | { type: 'RecordKeptEvents'; turnId: string; events: NewEvent<ConversationEvent>[] };

/** What every step's command carries: its turn, its own id (see StepMade) and when its work was done (ISO). */
interface StepCommand {
  turnId: string;
  stepId: string;
  at: string;
}

/** A conversation as the agent's commands are decided on it: its state and its turns. */
export interface FoldedForAgentCommands extends FoldedForCommands {
  turns: TurnRecord[];
}

/**
 * decideAgentStep(command, fold, prices) → the step's events (its calls priced by `prices`), or [] when it no longer applies: the
 * conversation is gone, the turn ended (cancelled, failed, answered by another worker), or the
 * log already holds this step. Never an exception: the runner plans again on the log.
 */
export function decideAgentStep(
  command: AgentCommand,
  { state, turns }: FoldedForAgentCommands,
  prices: PriceTable,
): DecidedEvent[] {
  if (state.status !== 'active') return [];
  const turn = turns.find((t) => t.turnId === command.turnId);
  if (command.type === 'RecordStoppedCall') {
    // a stopped call is billed whatever became of its turn; `cancelled` when the reader's cancel stopped it
    const status = findTurn(state, command.turnId)?.status;
    if (!status) return [];
    return modelCallStopped(prices, command.turnId, command.iteration, command.attempts, {
      cancelled: status === 'cancelled',
    });
  }
  if (!turn) return [];
  const made: StepMade | undefined =
    'stepId' in command ? { stepId: command.stepId, at: new Date(command.at) } : undefined;
  switch (command.type) {
    case 'RecordSummary':
    case 'RecordTrimmedHistory':
      // the turn's own cut before its first call, or the next turn's taken ahead after its reply
      if (turn.historyStart || turn.iterations.length > 0) return [];
      return command.type === 'RecordSummary'
        ? historySummarized(prices, made!, turn.turnId, command.cut, command.result)
        : historyTrimmed(prices, made!, turn.turnId, command.cut, command.failure);
    default:
      if (findTurn(state, turn.turnId)?.status !== 'pending' || turn.ending) return [];
  }
  switch (command.type) {
    case 'RecordModelReply':
      return command.iteration === nextCall(turn)
        ? modelReplied(prices, made!, turn, command, command.result, command.cited, command.searchedInstead)
        : [];
    case 'RecordModelBatchSubmission':
      return turn.modelBatches?.[command.submitted.step]
        ? []
        : [modelBatchSubmitted(made!, turn.turnId, command.submitted)];
    case 'RecordSearches':
      return turn.iterations.length === 0
        ? searchesInvoked(prices, made!, turn, command.reformulated, command.hyde)
        : [];
    case 'RecordToolResults': {
      const awaiting = new Set(awaitingResults(turn));
      const outputs = command.outputs.filter((o) => awaiting.has(o.call.toolUseId));
      return outputs.length === command.outputs.length ? toolResultsRecorded(made!, turn.turnId, outputs) : [];
    }
    case 'RequestToolApprovals': {
      const unasked = new Set(
        pendingCalls(turn)
          .filter((c) => !c.approval)
          .map((c) => c.toolUseId),
      );
      const calls = command.calls.filter((c) => unasked.has(c.toolUseId));
      return calls.length === command.calls.length
        ? approvalsRequested(made!, turn.turnId, calls, command.expiresAt)
        : [];
    }
    case 'ExpireToolApprovals': {
      const waiting = new Set(
        pendingCalls(turn)
          .filter((c) => c.approval && !c.approval.decided)
          .map((c) => c.toolUseId),
      );
      return approvalsExpired(
        made!,
        turn.turnId,
        command.toolCallIds.filter((id) => waiting.has(id)),
      );
    }
    case 'RecordKeptEvents':
      return command.events.every((e) => 'turnId' in e.data && e.data.turnId === turn.turnId)
        ? command.events.map(({ metadata: _stamped, ...e }) => e)
        : [];
  }
}

/** The handler's decider, its calls priced by `prices` (the runner hands it one step's command at a time). */
export const agentStepsDecider =
  (prices: PriceTable) =>
  (commands: AgentCommand[], folded: FoldedForAgentCommands): DecidedEvent[] =>
    commands.flatMap((c) => decideAgentStep(c, folded, prices));

/** A step's own id and time, made when its work is done. */
export const newStep = (): Pick<StepCommand, 'stepId' | 'at'> => ({
  stepId: randomUUID(),
  at: new Date().toISOString(),
});

/** The model call a turn makes next: after its last one, once that one's tool calls all have results. */
function nextCall(turn: TurnRecord): number | undefined {
  const last = turn.iterations[turn.iterations.length - 1];
  return !last || isComplete(last) ? turn.iterations.length + 1 : undefined;
}

/** The tool calls of the turn's last model call still without a result. */
function pendingCalls(turn: TurnRecord): ToolCallRecord[] {
  const last = turn.iterations[turn.iterations.length - 1];
  return last ? last.calls.filter((c) => !last.results.has(c.toolUseId)) : [];
}

const awaitingResults = (turn: TurnRecord): string[] => pendingCalls(turn).map((c) => c.toolUseId);
