import {
  AssistantBlockRef,
  BatchLink,
  Citation,
  ConversationEvent,
  ConversationPolicy,
  Usage,
} from '@parley/conversation';
import { LlmMessage } from '../llm/llm.types';

/** A stored conversation event with what the fold needs of its envelope. */
export type TurnEvent = ConversationEvent & { version: number; occurredAt: Date; metadata?: Record<string, unknown> };

export interface ToolCallRecord {
  toolUseId: string;
  name: string;
  input: unknown;
  /** the call asked the reader's approval (ToolApprovalRequested), and how it was decided */
  approval?: ApprovalRecord;
}

export interface ApprovalRecord {
  /** when it is denied unanswered (ISO 8601); absent: never */
  expiresAt?: string;
  decided?: { approved: boolean; reason?: string; by: 'reader' | 'timeout' };
}

export interface ToolResultRecord {
  content: string;
  isError: boolean;
  chunks: Citation[];
  citationStart: number;
}

/** One LLM call that asked for tools, and what came back. */
export interface IterationRecord {
  iteration: number;
  assistantText: string;
  /** the blocks in the model's order; undefined for iterations recorded before it was kept */
  assistantContent?: AssistantBlockRef[];
  calls: ToolCallRecord[];
  results: Map<string, ToolResultRecord>;
  usage?: Usage;
  model?: string;
}

export interface TurnRecord {
  turnId: string;
  messageId: string;
  content: string;
  selectedText?: string;
  postedAt: Date;
  /** the version of its UserMessagePosted: a history cut says which versions it leaves out */
  postedVersion: number;
  /** the span its UserMessagePosted was written under (W3C): the turn's trace, wherever it runs */
  traceparent?: string;
  /** the conversation's policy when it was posted: the turn runs by it, whatever changes later */
  policy?: ConversationPolicy;
  /** the books of the conversation, when they changed since the turn before: told the model with the question */
  sourcesNote?: string;
  /** the batch whose prompt this turn answers */
  batch?: BatchLink;
  /** the reader's monthly budget in USD when they asked (absent: the server's) */
  budgetUsdPerMonth?: number;
  /** the catalogue the reader's token named when they asked (absent: posted before 0.4) */
  catalogue?: string;
  /** model calls sent to the provider's Message Batches API: the provider's batch id by step key */
  modelBatches?: Record<string, string>;
  iterations: IterationRecord[];
  ending?: { type: 'AssistantReplied'; content: string } | { type: 'TurnFailed' | 'TurnCancelled' };
  /**
   * An ended turn a worker's fold keeps only as the messages histories send of it
   * (`turnsStillNeeded`): its iterations, tool results and citations are let go. No
   * `withTools`: only a history without tools still reaches it.
   */
  rendered?: RenderedTurn;
  /** where histories start from this turn on: recorded by it before its first model call */
  historyStart?: HistoryStart;
}

/** A cut of the history (HistorySummarized, or HistoryTrimmed when the summary call failed). */
export interface HistoryStart {
  /** histories send the turns posted after this version */
  afterVersion: number;
  /** the summary sent before them: this cut's, or after a trim the one before it */
  summary?: { text: string; coversVersions: [number, number] };
}

/** A past turn's messages as a history sends them, with their token estimate. */
export interface PastTurn {
  messages: LlmMessage[];
  tokens: number;
}

export interface RenderedTurn {
  withTools?: PastTurn;
  withoutTools?: PastTurn;
}

/** Folds a conversation's events into its turns, in posting order. */
export function turnsOf(events: TurnEvent[]): TurnRecord[] {
  return events.reduce((turns: TurnRecord[], e) => evolveTurns(turns, e), []);
}

/**
 * One event applied to the turns so far. Nothing given is changed: a turn an event touches is
 * copied, so a fold kept between loads (and read meanwhile by a turn in progress) never moves.
 */
export function evolveTurns(
  turns: TurnRecord[],
  e: TurnEvent,
  atPost: { policy?: ConversationPolicy; sourcesNote?: string } = {},
): TurnRecord[] {
  switch (e.type) {
    case 'UserMessagePosted':
      return [
        ...turns,
        {
          turnId: e.data.turnId,
          messageId: e.data.messageId,
          content: e.data.content,
          selectedText: e.data.selectedText,
          postedAt: e.occurredAt,
          postedVersion: e.version,
          ...(typeof e.metadata?.traceparent === 'string' ? { traceparent: e.metadata.traceparent } : {}),
          ...(atPost.policy && Object.keys(atPost.policy).length > 0 ? { policy: atPost.policy } : {}),
          ...(atPost.sourcesNote ? { sourcesNote: atPost.sourcesNote } : {}),
          ...(e.data.batch ? { batch: e.data.batch } : {}),
          ...(e.data.budgetUsdPerMonth !== undefined ? { budgetUsdPerMonth: e.data.budgetUsdPerMonth } : {}),
          ...(e.data.catalogue !== undefined ? { catalogue: e.data.catalogue } : {}),
          iterations: [],
        },
      ];
    case 'HistorySummarized': {
      const { summary, coversVersions } = e.data;
      return updateTurn(turns, e.data.turnId, (t) =>
        t.historyStart
          ? t
          : { ...t, historyStart: { afterVersion: coversVersions[1], summary: { text: summary, coversVersions } } },
      );
    }
    case 'HistoryTrimmed': {
      const summary = latestHistoryStart(turns, turns.length - 1)?.summary;
      return updateTurn(turns, e.data.turnId, (t) =>
        t.historyStart ? t : { ...t, historyStart: { afterVersion: e.data.droppedVersions[1], summary } },
      );
    }
    case 'ModelBatchSubmitted': {
      const { step, providerBatchId } = e.data;
      return updateTurn(turns, e.data.turnId, (t) =>
        t.modelBatches?.[step] ? t : { ...t, modelBatches: { ...t.modelBatches, [step]: providerBatchId } },
      );
    }
    case 'ToolInvoked':
      return updateTurn(turns, e.data.turnId, (t) => {
        if (t.ending) return t;
        const { iteration } = e.data;
        const it: IterationRecord = t.iterations.find((i) => i.iteration === iteration) ?? {
          iteration,
          assistantText: '',
          calls: [],
          results: new Map(),
          usage: e.data.usage,
          model: e.data.model,
        };
        const next: IterationRecord = {
          ...it,
          assistantText: e.data.assistantText || it.assistantText,
          assistantContent: e.data.assistantContent ?? it.assistantContent,
          calls: [...it.calls, { toolUseId: e.data.toolUseId, name: e.data.name, input: e.data.input }],
        };
        return { ...t, iterations: replaceOrAdd(t.iterations, it, next) };
      });
    case 'ToolResultRecorded':
      return updateTurn(turns, e.data.turnId, (t) => {
        const it = t.iterations.find((i) => i.calls.some((c) => c.toolUseId === e.data.toolUseId));
        if (!it) return t;
        const results = new Map(it.results).set(e.data.toolUseId, {
          content: e.data.content,
          isError: e.data.isError,
          chunks: e.data.chunks ?? [],
          citationStart: e.data.citationStart ?? 1,
        });
        return { ...t, iterations: replaceOrAdd(t.iterations, it, { ...it, results }) };
      });
    case 'ToolApprovalRequested': {
      const { expiresAt } = e.data;
      return updateCall(turns, e.data.turnId, e.data.toolCallId, (c) =>
        c.approval ? c : { ...c, approval: expiresAt ? { expiresAt } : {} },
      );
    }
    case 'ToolApprovalDecided': {
      const { approved, reason, by } = e.data;
      return updateCall(turns, e.data.turnId, e.data.toolCallId, (c) =>
        c.approval?.decided
          ? c
          : { ...c, approval: { ...c.approval, decided: { approved, by, ...(reason ? { reason } : {}) } } },
      );
    }
    case 'AssistantReplied':
      return endTurn(turns, e.data.turnId, { type: 'AssistantReplied', content: e.data.content });
    case 'TurnFailed':
    case 'TurnCancelled':
      return endTurn(turns, e.data.turnId, { type: e.type });
    case 'ModelCallStopped': // usage only: the turn goes on (or ended) as if the call had not been made
    default:
      return turns;
  }
}

/** The tool call with this id of the turn changed by `change`. */
function updateCall(
  turns: TurnRecord[],
  turnId: string,
  toolUseId: string,
  change: (c: ToolCallRecord) => ToolCallRecord,
): TurnRecord[] {
  return updateTurn(turns, turnId, (t) => {
    const it = t.iterations.find((i) => i.calls.some((c) => c.toolUseId === toolUseId));
    if (!it) return t;
    const calls = it.calls.map((c) => (c.toolUseId === toolUseId ? change(c) : c));
    return { ...t, iterations: replaceOrAdd(t.iterations, it, { ...it, calls }) };
  });
}

/** The turn with this id changed by `change`; the same array when there is none or nothing changed. */
function updateTurn(turns: TurnRecord[], turnId: string, change: (t: TurnRecord) => TurnRecord): TurnRecord[] {
  // the turn an event belongs to is nearly always the newest: look from the end
  let i = turns.length - 1;
  while (i >= 0 && turns[i].turnId !== turnId) i--;
  if (i < 0) return turns;
  const changed = change(turns[i]);
  if (changed === turns[i]) return turns;
  const copy = turns.slice();
  copy[i] = changed;
  return copy;
}

function replaceOrAdd<T>(items: T[], old: T, next: T): T[] {
  const i = items.indexOf(old);
  return i < 0 ? [...items, next] : items.map((x, j) => (j === i ? next : x));
}

function endTurn(turns: TurnRecord[], turnId: string, ending: NonNullable<TurnRecord['ending']>): TurnRecord[] {
  return updateTurn(turns, turnId, (t) => (t.ending ? t : { ...t, ending }));
}

/** What the model is told with the first question after the conversation's books changed (SourcesChanged). */
export function sourcesNote(books: Array<{ id: string; title: string }>): string {
  if (books.length === 0) return 'The reader removed the books from this conversation: there is no book to search now.';
  const list = books.map((b) => `"${b.title}" (book ${b.id})`).join(', ');
  return `The reader changed the books of this conversation. search_book now searches: ${list}.`;
}

/** The latest history cut recorded by the turn at `index` or one before it. */
export function latestHistoryStart(turns: TurnRecord[], index: number): HistoryStart | undefined {
  for (let i = Math.min(index, turns.length - 1); i >= 0; i--) if (turns[i].historyStart) return turns[i].historyStart;
  return undefined;
}

export const isComplete = (it: IterationRecord): boolean => it.calls.every((c) => it.results.has(c.toolUseId));
