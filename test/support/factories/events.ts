import { randomUUID } from 'node:crypto';
import {
  AssistantReplied,
  ConversationDeleted,
  ConversationEvent,
  ConversationRenamed,
  ConversationStarted,
  conversationStreamId,
  DecidedEvent,
  ReadingPositionChanged,
  ToolInvoked,
  ToolResultRecorded,
  TurnCancelled,
  TurnFailed,
  Usage,
  UserMessagePosted,
} from '@parley/conversation';
import { AppendResult, EventMetadata, EventStore, ExpectedVersion, NewEvent } from '@parley/event-store';

/**
 * Typed factories for conversation events, ready for EventStore.append: each returns a NewEvent
 * (id, type, data, metadata) of the union in libs/conversation/src/events.ts. Defaults make a
 * valid event; pass only the fields a test is about.
 */
type Of<E extends ConversationEvent> = NewEvent<E>;
type Extra = { id?: string; metadata?: EventMetadata };

function make<E extends ConversationEvent>(type: E['type'], data: E['data'], extra: Extra = {}): Of<E> {
  const event = { type, data } as E;
  return { ...event, id: extra.id ?? randomUUID(), metadata: extra.metadata ?? {} };
}

export const zeroUsageOf = (): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
});

export const conversationStarted = (
  data: Partial<ConversationStarted['data']> & { ownerId: string },
  extra: Extra = {},
): Of<ConversationStarted> =>
  make<ConversationStarted>(
    'ConversationStarted',
    { bookId: null, title: null, readingPosition: null, ...data },
    { metadata: { userId: data.ownerId }, ...extra },
  );

export const conversationRenamed = (title: string, extra?: Extra): Of<ConversationRenamed> =>
  make<ConversationRenamed>('ConversationRenamed', { title }, extra);

export const readingPositionChanged = (readingPosition: number | null, extra?: Extra): Of<ReadingPositionChanged> =>
  make<ReadingPositionChanged>('ReadingPositionChanged', { readingPosition }, extra);

export const userMessagePosted = (
  data: Partial<UserMessagePosted['data']> & { content: string },
  extra?: Extra,
): Of<UserMessagePosted> => {
  const turnId = data.turnId ?? randomUUID();
  return make<UserMessagePosted>(
    'UserMessagePosted',
    { messageId: randomUUID(), ...data, turnId },
    { metadata: { correlationId: turnId }, ...extra },
  );
};

export const toolInvoked = (
  data: Partial<ToolInvoked['data']> & { turnId: string; name: string },
  extra?: Extra,
): Of<ToolInvoked> =>
  make<ToolInvoked>(
    'ToolInvoked',
    { toolUseId: `toolu_${randomUUID().replace(/-/g, '')}`, input: {}, iteration: 1, ...data },
    { metadata: { correlationId: data.turnId }, ...extra },
  );

export const toolResultRecorded = (
  data: Partial<ToolResultRecorded['data']> & { turnId: string; toolUseId: string; content: string },
  extra?: Extra,
): Of<ToolResultRecorded> =>
  make<ToolResultRecorded>(
    'ToolResultRecorded',
    { isError: false, ...data },
    { metadata: { correlationId: data.turnId }, ...extra },
  );

export const assistantReplied = (
  data: Partial<AssistantReplied['data']> & { turnId: string; content: string },
  extra?: Extra,
): Of<AssistantReplied> =>
  make<AssistantReplied>(
    'AssistantReplied',
    {
      messageId: randomUUID(),
      model: 'claude-sonnet-5-5',
      stopReason: 'end_turn',
      usage: zeroUsageOf(),
      costUsd: 0,
      citations: [],
      iterations: 1,
      latencyMs: 0,
      ...data,
    },
    { metadata: { correlationId: data.turnId }, ...extra },
  );

export const turnFailed = (data: Partial<TurnFailed['data']> & { turnId: string }, extra?: Extra): Of<TurnFailed> =>
  make<TurnFailed>(
    'TurnFailed',
    { code: 'llm_error', message: 'the model failed', retryable: false, ...data },
    { metadata: { correlationId: data.turnId }, ...extra },
  );

export const turnCancelled = (turnId: string, extra?: Extra): Of<TurnCancelled> =>
  make<TurnCancelled>('TurnCancelled', { turnId }, { metadata: { correlationId: turnId }, ...extra });

export const conversationDeleted = (extra?: Extra): Of<ConversationDeleted> =>
  make<ConversationDeleted>('ConversationDeleted', {}, extra);

/** Events as a decision made them (forkEvents), each given an id as the command handler does. */
export const withIds = (events: DecidedEvent[]): NewEvent<ConversationEvent>[] =>
  events.map((e) => ({ ...e, id: e.id ?? randomUUID() }));

/**
 * Given: appends `events` to the conversation's stream (a new stream unless `expectedVersion`
 * says otherwise) and returns what the store answered.
 */
export async function givenConversation(
  store: EventStore,
  conversationId: string,
  events: NewEvent<ConversationEvent>[],
  expectedVersion: ExpectedVersion = 'no_stream',
): Promise<AppendResult<ConversationEvent>> {
  return store.append<ConversationEvent>(conversationStreamId(conversationId), events, { expectedVersion });
}
