import { BatchItem, BatchVia, ConversationEvent, ConversationPolicy, startedBookIds } from './events';

export type TurnStatus = 'pending' | 'replied' | 'failed' | 'cancelled';

export interface TurnState {
  turnId: string;
  messageId: string;
  status: TurnStatus;
  /** the turn's tool calls that asked the reader's approval, by call id: waiting, or how it was decided */
  approvals?: Record<string, ApprovalStatus>;
}

export type ApprovalStatus = 'requested' | 'approved' | 'denied';

export interface BatchState {
  mode: 'sequential' | 'independent';
  items: BatchItem[];
  /** how its prompts reach the model */
  via: BatchVia;
  completed: boolean;
}

export interface ConversationState {
  /** deleted: by a release before erasure, and not erased yet; erased: nothing of it is left */
  status: 'none' | 'active' | 'deleted' | 'erased';
  ownerId: string | null;
  /** the first of `bookIds`, or null */
  bookId: string | null;
  /** the books the agent searches */
  bookIds: string[];
  title: string | null;
  readingPosition: number | null;
  forkedFrom: { conversationId: string; version: number } | null;
  /** the policy in force: the fields a PATCH set (PolicyChanged); the rest follow the server */
  policy: ConversationPolicy;
  version: number;
  messageCount: number;
  /** every turn in posting order */
  turns: TurnState[];
  /** batches started here, by id */
  batches: Record<string, BatchState>;
}

export const TITLE_FROM_MESSAGE_MAX = 60;

export function initialState(): ConversationState {
  return {
    status: 'none',
    ownerId: null,
    bookId: null,
    bookIds: [],
    title: null,
    readingPosition: null,
    forkedFrom: null,
    policy: {},
    version: 0,
    messageCount: 0,
    turns: [],
    batches: {},
  };
}

/** A title from the first user message: at most 60 characters, cut at a word boundary. */
export function titleFromMessage(content: string): string {
  const text = content.replace(/\s+/g, ' ').trim();
  if (text.length <= TITLE_FROM_MESSAGE_MAX) return text;
  const cut = text.slice(0, TITLE_FROM_MESSAGE_MAX - 1);
  const space = cut.lastIndexOf(' ');
  return (space > 20 ? cut.slice(0, space) : cut).replace(/[\s,;:.-]+$/, '') + '…';
}

export function evolve(state: ConversationState, event: ConversationEvent): ConversationState {
  const s = { ...state, version: state.version + 1 };
  switch (event.type) {
    case 'ConversationStarted':
      return {
        ...s,
        status: 'active',
        ownerId: event.data.ownerId,
        bookId: startedBookIds(event.data)[0] ?? null,
        bookIds: startedBookIds(event.data),
        title: event.data.title,
        readingPosition: event.data.readingPosition,
        forkedFrom: event.data.forkedFrom ?? null,
      };
    case 'ConversationRenamed':
      return { ...s, title: event.data.title };
    case 'ReadingPositionChanged':
      return { ...s, readingPosition: event.data.readingPosition };
    case 'PolicyChanged':
      return { ...s, policy: event.data.policy };
    case 'SourcesChanged':
      return { ...s, bookIds: event.data.bookIds, bookId: event.data.bookIds[0] ?? null };
    case 'UserMessagePosted':
      return {
        ...s,
        title: s.title ?? titleFromMessage(event.data.content),
        messageCount: s.messageCount + 1,
        turns: [...s.turns, { turnId: event.data.turnId, messageId: event.data.messageId, status: 'pending' }],
      };
    case 'ToolInvoked':
    case 'ToolResultRecorded':
    case 'HistorySummarized':
    case 'HistoryTrimmed':
    case 'ModelBatchSubmitted':
    case 'ModelCallStopped':
    case 'PassagesWithdrawn':
      return s;
    case 'ToolApprovalRequested':
      return approval(s, event.data.turnId, event.data.toolCallId, 'requested');
    case 'ToolApprovalDecided':
      return approval(s, event.data.turnId, event.data.toolCallId, event.data.approved ? 'approved' : 'denied');
    case 'BatchStarted': {
      const { batchId, mode, items, via = 'messages' } = event.data;
      return { ...s, batches: { ...s.batches, [batchId]: { mode, items, via, completed: false } } };
    }
    case 'BatchCompleted': {
      const batch = s.batches[event.data.batchId];
      return batch ? { ...s, batches: { ...s.batches, [event.data.batchId]: { ...batch, completed: true } } } : s;
    }
    case 'AssistantReplied':
      return { ...endTurn(s, event.data.turnId, 'replied'), messageCount: s.messageCount + 1 };
    case 'TurnFailed':
      return endTurn(s, event.data.turnId, 'failed');
    case 'TurnCancelled':
      return endTurn(s, event.data.turnId, 'cancelled');
    case 'ConversationDeleted':
      return { ...s, status: 'deleted' };
    case 'ConversationErased':
      return { ...initialState(), status: 'erased', version: s.version };
    default: {
      const unknown: never = event;
      return unknownEvent(s, unknown);
    }
  }
}

/** Events of types this build does not know (written by a newer one) still count as versions. */
function unknownEvent(state: ConversationState, _event: never): ConversationState {
  return state;
}

function approval(state: ConversationState, turnId: string, toolCallId: string, status: ApprovalStatus) {
  return withTurn(state, turnId, (t) => ({ ...t, approvals: { ...t.approvals, [toolCallId]: status } }));
}

function endTurn(state: ConversationState, turnId: string, status: TurnStatus): ConversationState {
  return withTurn(state, turnId, (t) => (t.status === 'pending' ? { ...t, status } : t));
}

/**
 * The state with one turn changed. The turn is looked for from the newest (it nearly always is
 * among the last), and the other turns are copied as they are: a long conversation's every event
 * would otherwise build each of its turns anew.
 */
function withTurn(state: ConversationState, turnId: string, change: (turn: TurnState) => TurnState) {
  const at = state.turns.findLastIndex((t) => t.turnId === turnId);
  if (at < 0) return state;
  const turns = state.turns.slice();
  turns[at] = change(turns[at]);
  return { ...state, turns };
}

export const fold = (events: ConversationEvent[], from = initialState()): ConversationState =>
  events.reduce(evolve, from);

export const pendingTurns = (state: ConversationState): TurnState[] =>
  state.turns.filter((t) => t.status === 'pending');
export const findTurn = (state: ConversationState, turnId: string): TurnState | undefined =>
  state.turns.find((t) => t.turnId === turnId);
