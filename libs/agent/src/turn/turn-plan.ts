import { historyWindow } from './conversation-history';
import { isComplete, ToolCallRecord, TurnRecord } from './turn-fold';

/**
 * What a worker does next for a turn: a pure function of the folded stream, so a crashed or
 * retried worker continues where the log says, repeating no recorded tool call.
 */
export type NextStep =
  | { kind: 'ended' }
  | TurnWait
  | HistoryCutStep
  | { kind: 'run-tools'; iteration: number; calls: ToolCallRecord[] }
  | { kind: 'call-llm'; iteration: number; allowTools: boolean };

/** Before its first model call, the turn cuts its history: summarise the turns [from, to) or drop them. */
export type HistoryCutStep = { kind: 'cut-history'; from: number; to: number };

/** The context budget of the turn's histories, and whether they carry tool exchanges. */
export interface HistoryBudget {
  budgetTokens: number;
  withTools: boolean;
}

/** An earlier turn of the conversation is open: `forTurnId` is the first, `behind` how many are open before this one. */
export type TurnWait = { kind: 'wait'; forTurnId: string; behind: number };

export function nextStep(
  turns: TurnRecord[],
  turnId: string,
  maxIterations: number,
  history?: HistoryBudget,
): NextStep {
  const index = turns.findIndex((t) => t.turnId === turnId);
  const turn = turns[index];
  if (!turn || turn.ending) return { kind: 'ended' };
  const open = turns.slice(0, index).filter((t) => !t.ending);
  if (open.length > 0) return { kind: 'wait', forTurnId: open[0].turnId, behind: open.length };
  // a history is cut only before the turn's first call: within a turn it never changes
  if (history && turn.iterations.length === 0 && !turn.historyStart) {
    const window = historyWindow(turns, index, history.budgetTokens, history.withTools);
    if (window.cut) return { kind: 'cut-history', from: window.cut.from, to: window.start };
  }
  const last = turn.iterations[turn.iterations.length - 1];
  if (last && !isComplete(last)) {
    return {
      kind: 'run-tools',
      iteration: last.iteration,
      calls: last.calls.filter((c) => !last.results.has(c.toolUseId)),
    };
  }
  const iteration = turn.iterations.length + 1;
  // the last allowed call may not use tools: it has to answer with what it has
  return { kind: 'call-llm', iteration, allowTools: iteration < maxIterations };
}

/** Citation numbers are unique within a turn: each tool call gets its own block of numbers. */
export const CITATION_BLOCK = 10;
export function citationStartFor(turn: TurnRecord, toolUseId: string): number {
  const calls = turn.iterations.flatMap((it) => it.calls.map((c) => c.toolUseId));
  const n = calls.indexOf(toolUseId);
  return (n < 0 ? calls.length : n) * CITATION_BLOCK + 1;
}

/**
 * Whether turns with a book run the always-retrieve plan: with LLM_RETRIEVAL_MODE=always-retrieve,
 * or in `auto` with a provider without tool use. Its answers send histories without tool
 * exchanges; the tool-use loop sends them with.
 */
export function usesAlwaysRetrieve(
  mode: 'auto' | 'tools' | 'always-retrieve',
  providerSupportsTools: boolean,
): boolean {
  return mode === 'always-retrieve' || (mode === 'auto' && !providerSupportsTools);
}

/**
 * The always-retrieve plan, for providers without tool use (or when forced): reformulate the
 * question into one search, run it, then answer with the passages in the prompt.
 */
export type RetrievalStep =
  | { kind: 'ended' }
  | TurnWait
  | HistoryCutStep
  | { kind: 'reformulate' }
  | { kind: 'run-tools'; iteration: number; calls: ToolCallRecord[] }
  | { kind: 'answer' };

export function nextRetrievalStep(turns: TurnRecord[], turnId: string, budgetTokens?: number): RetrievalStep {
  const history = budgetTokens === undefined ? undefined : { budgetTokens, withTools: false };
  const step = nextStep(turns, turnId, Number.MAX_SAFE_INTEGER, history);
  if (step.kind !== 'call-llm') return step;
  return step.iteration === 1 ? { kind: 'reformulate' } : { kind: 'answer' };
}
