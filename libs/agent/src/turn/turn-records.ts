import { AssistantBlockRef, Citation, ConversationEvent, Usage } from '@parley/conversation';

/** A stored conversation event with what the fold needs of its envelope. */
export type TurnEvent = ConversationEvent & { version: number; occurredAt: Date };

export interface ToolCallRecord {
  toolUseId: string;
  name: string;
  input: unknown;
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
  iterations: IterationRecord[];
  ending?: { type: 'AssistantReplied'; content: string } | { type: 'TurnFailed' | 'TurnCancelled' };
  /** kept by a worker's fold for histories without tools only (`turnsStillNeeded`); iterations emptied */
  toolExchangesDropped?: true;
}

/** Folds a conversation's events into its turns, in posting order. */
export function turnsOf(events: TurnEvent[]): TurnRecord[] {
  return events.reduce(evolveTurns, []);
}

/**
 * One event applied to the turns so far. Nothing given is changed: a turn an event touches is
 * copied, so a fold kept between loads (and read meanwhile by a turn in progress) never moves.
 */
export function evolveTurns(turns: TurnRecord[], e: TurnEvent): TurnRecord[] {
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
          iterations: [],
        },
      ];
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
    case 'AssistantReplied':
      return endTurn(turns, e.data.turnId, { type: 'AssistantReplied', content: e.data.content });
    case 'TurnFailed':
    case 'TurnCancelled':
      return endTurn(turns, e.data.turnId, { type: e.type });
    default:
      return turns;
  }
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

export const isComplete = (it: IterationRecord): boolean => it.calls.every((c) => it.results.has(c.toolUseId));
