/**
 * The events a conversation's stream carries (docs/events.md), typed from the OpenAPI document,
 * and the live text frame the document cannot type.
 */
import type { components } from './schema';

/** A stored conversation event as served: `type` tells which, `data` holds its fields. */
export type ConversationEvent = components['schemas']['ConversationEventEnvelope'];
export type ConversationEventType = ConversationEvent['type'];
/** The event of one type, e.g. `EventOf<'AssistantReplied'>`. */
export type EventOf<T extends ConversationEventType> = Extract<ConversationEvent, { type: T }>;

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

/** The delta as a stream item, shaped like an event (`type`, `data`) so one `switch` takes both. */
export interface TextDeltaItem {
  type: 'AssistantTextDelta';
  data: AssistantTextDelta;
}

/** Every stored event type, in the order docs/events.md lists them; the compiler checks the list is the document's. */
const EVENT_TYPES: { readonly [T in ConversationEventType]: true } = {
  ConversationStarted: true,
  ConversationRenamed: true,
  ReadingPositionChanged: true,
  PolicyChanged: true,
  SourcesChanged: true,
  UserMessagePosted: true,
  ToolInvoked: true,
  ToolResultRecorded: true,
  AssistantReplied: true,
  TurnFailed: true,
  TurnCancelled: true,
  HistorySummarized: true,
  HistoryTrimmed: true,
  ModelBatchSubmitted: true,
  ModelCallStopped: true,
  BatchStarted: true,
  BatchCompleted: true,
  PassagesWithdrawn: true,
  ToolApprovalRequested: true,
  ToolApprovalDecided: true,
  ConversationDeleted: true,
  ConversationErased: true,
};
export const CONVERSATION_EVENT_TYPES = Object.keys(EVENT_TYPES) as readonly ConversationEventType[];

export const isConversationEventType = (type: string): type is ConversationEventType =>
  Object.prototype.hasOwnProperty.call(EVENT_TYPES, type);

/** The events that end a turn: exactly one of them per UserMessagePosted. */
export const TURN_ENDING_TYPES: readonly ConversationEventType[] = ['AssistantReplied', 'TurnFailed', 'TurnCancelled'];

/** The events after which a conversation's stream ends: nothing follows them (docs/sse.md). */
export const STREAM_ENDING_TYPES: readonly ConversationEventType[] = ['ConversationErased', 'ConversationDeleted'];
