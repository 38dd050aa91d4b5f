/**
 * The shapes the terminal client reads from the API: the generated client's types, from the
 * OpenAPI document. Readers ignore fields they do not know (docs/events.md: new optional fields
 * appear over time).
 */
import type { AssistantTextDelta, Schemas } from '@parley/client';

export type Book = Schemas['BookDto'];
/** a conversation as shown, or as listed (the list leaves out its turns) */
export type Conversation = Schemas['ConversationDto'] | Schemas['ConversationSummaryDto'];
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
export type Citation = Schemas['Citation'];
export type Usage = Schemas['Usage'];
/** One stored event, as GET …/events and the SSE stream send it; `type` tells which data it has. */
export type EventEnvelope = Schemas['ConversationEventEnvelope'];
export type UserMessagePosted = Schemas['UserMessagePosted']['data'];
export type ToolInvoked = Schemas['ToolInvoked']['data'];
export type ToolResultRecorded = Schemas['ToolResultRecorded']['data'];
export type AssistantReplied = Schemas['AssistantReplied']['data'];
export type TurnFailed = Schemas['TurnFailed']['data'];

export type TextDelta = AssistantTextDelta;

export const TURN_ENDINGS = ['AssistantReplied', 'TurnFailed', 'TurnCancelled'] as const;

/** The envelope of one event type: a check of `e.type` narrows an EventEnvelope to it, and its data with it. */
export type EnvelopeOf<K extends EventEnvelope['type']> = Extract<EventEnvelope, { type: K }>;
