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
}

/** Folds a conversation's events into its turns, in posting order. */
export function turnsOf(events: TurnEvent[]): TurnRecord[] {
  const turns: TurnRecord[] = [];
  const byId = new Map<string, TurnRecord>();
  for (const e of events) {
    switch (e.type) {
      case 'UserMessagePosted': {
        const t: TurnRecord = {
          turnId: e.data.turnId,
          messageId: e.data.messageId,
          content: e.data.content,
          selectedText: e.data.selectedText,
          postedAt: e.occurredAt,
          iterations: [],
        };
        turns.push(t);
        byId.set(t.turnId, t);
        break;
      }
      case 'ToolInvoked': {
        const t = byId.get(e.data.turnId);
        if (!t || t.ending) break;
        let it = t.iterations.find((i) => i.iteration === e.data.iteration);
        if (!it) {
          it = {
            iteration: e.data.iteration,
            assistantText: '',
            calls: [],
            results: new Map(),
            usage: e.data.usage,
            model: e.data.model,
          };
          t.iterations.push(it);
        }
        if (e.data.assistantText) it.assistantText = e.data.assistantText;
        if (e.data.assistantContent) it.assistantContent = e.data.assistantContent;
        it.calls.push({ toolUseId: e.data.toolUseId, name: e.data.name, input: e.data.input });
        break;
      }
      case 'ToolResultRecorded': {
        const t = byId.get(e.data.turnId);
        const it = t?.iterations.find((i) => i.calls.some((c) => c.toolUseId === e.data.toolUseId));
        if (!it) break;
        it.results.set(e.data.toolUseId, {
          content: e.data.content,
          isError: e.data.isError,
          chunks: e.data.chunks ?? [],
          citationStart: e.data.citationStart ?? 1,
        });
        break;
      }
      case 'AssistantReplied':
        endTurn(byId.get(e.data.turnId), { type: 'AssistantReplied', content: e.data.content });
        break;
      case 'TurnFailed':
      case 'TurnCancelled':
        endTurn(byId.get(e.data.turnId), { type: e.type });
        break;
      default:
        break;
    }
  }
  return turns;
}

function endTurn(t: TurnRecord | undefined, ending: NonNullable<TurnRecord['ending']>): void {
  if (t && !t.ending) t.ending = ending;
}

export const isComplete = (it: IterationRecord): boolean => it.calls.every((c) => it.results.has(c.toolUseId));
