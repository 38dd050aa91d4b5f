import { historyCutAhead, historyWindow } from './history-cut';
import { isComplete, ToolCallRecord, TurnRecord } from './turn-fold';
import { RetrievalMode, TurnSettings } from './turn-settings';

/**
 * What a worker does next for a turn (planTurn): a pure function of the folded stream, so a
 * crashed or retried worker continues where the log says, repeating no recorded tool call.
 */
export type TurnStep =
  | { kind: 'ended' }
  | TurnWait
  | HistoryCutStep
  | RunToolsStep
  | ApprovalStep
  /** the tool-use loop's model call; the last allowed one may not use tools */
  | { kind: 'call-llm'; iteration: number; allowTools: boolean }
  /** always-retrieve: the question turned into one search */
  | { kind: 'reformulate' }
  /** always-retrieve: the answer with the passages found in the prompt */
  | { kind: 'answer' }
  /** whole-book: the answer with the book up to the reading position in the prompt, no tools */
  | { kind: 'answer-from-book'; iteration: number };

/** The tool calls of the iteration recorded without results (a call denied approval is recorded as denied, not run). */
export type RunToolsStep = { kind: 'run-tools'; iteration: number; calls: ToolCallRecord[] };

/**
 * Tool calls that need the reader's approval before they run: ask it (ToolApprovalRequested),
 * wait for it holding no worker (until: when the first request expires), or deny those that
 * expired unanswered.
 */
export type ApprovalStep =
  | { kind: 'request-approvals'; iteration: number; calls: ToolCallRecord[] }
  | { kind: 'wait-approval'; until?: string }
  | { kind: 'expire-approvals'; calls: ToolCallRecord[] };

/**
 * Cut the history: summarise the turns [from, to) or drop them. A turn cuts before its first
 * model call, or after its reply for the turn after it (a cut ahead). `mayBeCutAheadBy`: the turn
 * before, which replied without cutting; while its job runs it may still take this cut ahead.
 */
export type HistoryCutStep = { kind: 'cut-history'; from: number; to: number; mayBeCutAheadBy?: string };

/** An earlier turn of the conversation is open: `forTurnId` is the first, `behind` how many are open before this one. */
export type TurnWait = { kind: 'wait'; forTurnId: string; behind: number };

/** What the plan goes by besides the turns: the turn's settings, and what its conversation and this worker offer. */
export interface TurnPlanContext {
  settings: Pick<TurnSettings, 'maxIterations' | 'budgetTokens' | 'retrievalMode'>;
  /** search_book is offered in the conversation (it has a book): the always-retrieve plan has something to search */
  searchOffered: boolean;
  providerSupportsTools: boolean;
  /** the conversation was deleted or erased: none of its turns goes on */
  deleted: boolean;
  /** the turn reads the whole book (whole-book retrieval, or `auto` with a book that fits): see wholeBookChoice */
  wholeBook?: boolean;
  /** whether a call of this tool waits for the reader's approval (absent: none does) */
  needsApproval?: (tool: string) => boolean;
  /** now, in ms since the epoch: an approval request past its expiry is denied */
  now?: number;
}

const ENDED = { kind: 'ended' } as const;

/**
 * The turn's next step. A turn with a book runs the always-retrieve plan (reformulate, search,
 * answer) where `usesAlwaysRetrieve` says so, else the tool-use loop (call the model, run the
 * tools it asked for, again). A history is cut only before the turn's first call, so it never
 * changes within a turn; a turn that replied takes the cut the next turn would need ahead, while
 * the reader reads the answer (not a batch's turns: a batch's figures are final when it completes).
 */
export function planTurn(turns: TurnRecord[], turnId: string, context: TurnPlanContext): TurnStep {
  const index = turns.findIndex((t) => t.turnId === turnId);
  const turn = turns[index];
  if (context.deleted || !turn) return ENDED;
  const { maxIterations, budgetTokens, retrievalMode } = context.settings;
  const wholeBook = context.wholeBook ?? false;
  const retrieveFirst =
    !wholeBook && context.searchOffered && usesAlwaysRetrieve(retrievalMode, context.providerSupportsTools);
  // the always-retrieve and whole-book plans' histories carry no tool exchanges
  const withTools = !retrieveFirst && !wholeBook;
  if (turn.ending) {
    const ahead = turn.batch ? undefined : historyCutAhead(turns, index, budgetTokens, withTools);
    return ahead ? { kind: 'cut-history', ...ahead } : ENDED;
  }
  const open = turns.slice(0, index).filter((t) => !t.ending);
  if (open.length > 0) return { kind: 'wait', forTurnId: open[0].turnId, behind: open.length };
  if (turn.iterations.length === 0 && !turn.historyStart) {
    const window = historyWindow(turns, index, budgetTokens, withTools);
    if (window.cut) {
      const before = turns[index - 1];
      const mayCutAhead = before?.ending?.type === 'AssistantReplied' && !before.historyStart && !before.batch;
      return {
        kind: 'cut-history',
        from: window.cut.from,
        to: window.start,
        ...(mayCutAhead ? { mayBeCutAheadBy: before.turnId } : {}),
      };
    }
  }
  const last = turn.iterations[turn.iterations.length - 1];
  if (last && !isComplete(last)) {
    const calls = last.calls.filter((c) => !last.results.has(c.toolUseId));
    return approvalStep(last.iteration, calls, context) ?? { kind: 'run-tools', iteration: last.iteration, calls };
  }
  const iteration = turn.iterations.length + 1;
  if (wholeBook) return { kind: 'answer-from-book', iteration };
  if (retrieveFirst) return iteration === 1 ? { kind: 'reformulate' } : { kind: 'answer' };
  return { kind: 'call-llm', iteration, allowTools: iteration < maxIterations };
}

/**
 * What the iteration's calls wait for before they run: their approvals asked (all that need one,
 * together), waited for, or denied on expiry. Undefined when every call may run (or be recorded
 * as denied). A call once asked waits for its answer, whatever the tool's setting says now.
 */
function approvalStep(iteration: number, calls: ToolCallRecord[], context: TurnPlanContext): ApprovalStep | undefined {
  const unasked = calls.filter((c) => !c.approval && context.needsApproval?.(c.name));
  if (unasked.length > 0) return { kind: 'request-approvals', iteration, calls: unasked };
  const waiting = calls.flatMap((call) =>
    call.approval && !call.approval.decided ? [{ call, expiresAt: call.approval.expiresAt }] : [],
  );
  if (waiting.length === 0) return undefined;
  const now = context.now ?? Date.now();
  const expired = waiting.filter((w) => w.expiresAt !== undefined && Date.parse(w.expiresAt) <= now);
  if (expired.length > 0) return { kind: 'expire-approvals', calls: expired.map((w) => w.call) };
  const expiries = waiting.flatMap((w) => (w.expiresAt ? [w.expiresAt] : [])).sort();
  return { kind: 'wait-approval', ...(expiries.length ? { until: expiries[0] } : {}) };
}

/** Citation numbers are unique within a turn: each tool call gets its own block of numbers. */
export const CITATION_BLOCK = 10;
export function citationStartFor(turn: TurnRecord, toolUseId: string): number {
  const calls = turn.iterations.flatMap((it) => it.calls.map((c) => c.toolUseId));
  const n = calls.indexOf(toolUseId);
  return (n < 0 ? calls.length : n) * CITATION_BLOCK + 1;
}

/**
 * Whether turns with a book run the always-retrieve plan (when they do not read the whole book):
 * with LLM_RETRIEVAL_MODE=always-retrieve, or in `auto` (or `whole-book`) with a provider without tool use. Its answers send histories without tool
 * exchanges; the tool-use loop sends them with.
 */
export function usesAlwaysRetrieve(mode: RetrievalMode, providerSupportsTools: boolean): boolean {
  // whole-book turns that do not read the book (it does not fit, or the provider takes no documents) search as `auto` does
  return mode === 'always-retrieve' || ((mode === 'auto' || mode === 'whole-book') && !providerSupportsTools);
}
