/**
 * The conversation stream's events (docs/events.md). Type names are stored contracts: string
 * constants, never class names.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

export interface Citation {
  chunkId: string;
  chapter: string;
  chapterIndex?: number;
  section: string | null;
  page: number | null;
  score: number;
}

export interface ConversationStarted {
  type: 'ConversationStarted';
  data: {
    ownerId: string;
    bookId: string | null;
    title: string | null;
    readingPosition: number | null;
    forkedFrom?: { conversationId: string; version: number };
  };
}
export interface ConversationRenamed {
  type: 'ConversationRenamed';
  data: { title: string };
}
export interface ReadingPositionChanged {
  type: 'ReadingPositionChanged';
  data: { readingPosition: number | null };
}
export interface UserMessagePosted {
  type: 'UserMessagePosted';
  data: { messageId: string; turnId: string; content: string; selectedText?: string };
}
export interface ToolInvoked {
  type: 'ToolInvoked';
  data: {
    turnId: string;
    toolUseId: string;
    name: string;
    input: unknown;
    iteration: number;
    /** all the text the model wrote in this call, on the first ToolInvoked of an iteration */
    assistantText?: string;
    /**
     * The call's blocks in the order the model wrote them (text, and tool_use by id), on the first
     * ToolInvoked of an iteration. Absent on events written before it existed: their text is
     * replayed before the tool calls.
     */
    assistantContent?: AssistantBlockRef[];
    /** the usage and model of the LLM call, on the first ToolInvoked of an iteration */
    usage?: Usage;
    model?: string;
  };
}

/** A block of an assistant message as recorded: text inline, a tool call by its id. */
export type AssistantBlockRef = { type: 'text'; text: string } | { type: 'tool_use'; toolUseId: string };
export interface ToolResultRecorded {
  type: 'ToolResultRecorded';
  data: {
    turnId: string;
    toolUseId: string;
    content: string;
    isError: boolean;
    chunks?: Citation[];
    /** the citation number of the first chunk (numbers are unique within a turn) */
    citationStart?: number;
  };
}
export interface AssistantReplied {
  type: 'AssistantReplied';
  data: {
    turnId: string;
    messageId: string;
    content: string;
    model: string;
    stopReason: string;
    usage: Usage;
    costUsd: number;
    citations: Citation[];
    isFromBook?: boolean;
    iterations: number;
    latencyMs: number;
  };
}
export interface TurnFailed {
  type: 'TurnFailed';
  data: { turnId: string; code: string; message: string; retryable: boolean };
}
export interface TurnCancelled {
  type: 'TurnCancelled';
  data: { turnId: string };
}
export interface ConversationDeleted {
  type: 'ConversationDeleted';
  data: Record<string, never>;
}

/**
 * A token delta of the reply being written (the `event: AssistantTextDelta` SSE frame): live only,
 * never stored, no id; AssistantReplied holds the whole text.
 */
export interface AssistantTextDelta {
  turnId: string;
  /** the LLM call of the turn (1, 2, … as in ToolInvoked.iteration) */
  iteration: number;
  /** 1, or more when a call broken off midway was made again: drop the text of earlier attempts */
  attempt: number;
  /** 0, 1, … within one attempt of one call */
  index: number;
  text: string;
}

export type ConversationEvent =
  | ConversationStarted
  | ConversationRenamed
  | ReadingPositionChanged
  | UserMessagePosted
  | ToolInvoked
  | ToolResultRecorded
  | AssistantReplied
  | TurnFailed
  | TurnCancelled
  | ConversationDeleted;

export type ConversationEventType = ConversationEvent['type'];

export const CONVERSATION_EVENT_TYPES: readonly ConversationEventType[] = [
  'ConversationStarted',
  'ConversationRenamed',
  'ReadingPositionChanged',
  'UserMessagePosted',
  'ToolInvoked',
  'ToolResultRecorded',
  'AssistantReplied',
  'TurnFailed',
  'TurnCancelled',
  'ConversationDeleted',
];

const KNOWN_TYPES: ReadonlySet<string> = new Set(CONVERSATION_EVENT_TYPES);

/**
 * An event of a type this build knows. Readers of the whole log (projections, the dispatcher)
 * narrow with it; types a newer build wrote are not, and they skip those.
 */
export function isConversationEvent<T extends { type: string }>(event: T): event is T & ConversationEvent {
  return KNOWN_TYPES.has(event.type);
}

/** The events that end a turn: exactly one of them per UserMessagePosted. */
export const TURN_ENDING_TYPES: readonly ConversationEventType[] = ['AssistantReplied', 'TurnFailed', 'TurnCancelled'];

/** Streams are named by category and id, so the log can hold other aggregates later. */
export const conversationStreamId = (conversationId: string): string => `conversation-${conversationId}`;
export const conversationIdOf = (streamId: string): string | undefined =>
  streamId.startsWith('conversation-') ? streamId.slice('conversation-'.length) : undefined;
