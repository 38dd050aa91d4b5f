import { randomUUID } from 'node:crypto';
import { ToolContext, TurnRecord, turnsOf } from '@parley/agent';
import { ConversationEvent, ConversationEventType, conversationStreamId, fold } from '@parley/conversation';
import { EventStore, NewEvent, StoredEvent } from '@parley/event-store';

/** A turn as the log says it stands: the conversation's events folded, and the turn among them. */
export interface LoadedTurn {
  events: StoredEvent<ConversationEvent>[];
  version: number;
  turns: TurnRecord[];
  turn: TurnRecord | undefined;
  ctx: ToolContext;
  deleted: boolean;
}

export async function loadTurn(
  store: EventStore,
  conversationId: string,
  turnId: string,
  signal: AbortSignal,
): Promise<LoadedTurn> {
  const events = await store.readStream<ConversationEvent>(conversationStreamId(conversationId));
  const state = fold(events);
  const turns = turnsOf(events);
  return {
    events,
    version: state.version,
    turns,
    turn: turns.find((t) => t.turnId === turnId),
    deleted: state.status !== 'active',
    ctx: {
      userId: state.ownerId ?? '',
      conversationId,
      bookId: state.bookId,
      readingPosition: state.readingPosition,
      signal,
    },
  };
}

/** Agent events name the owner, the turn (correlation) and the event they follow from (causation). */
export function turnEvent<T extends ConversationEventType>(
  history: StoredEvent<ConversationEvent>[],
  turnId: string,
  type: T,
  data: Extract<ConversationEvent, { type: T }>['data'],
): NewEvent<ConversationEvent> {
  const owner = history.find((e) => e.type === 'ConversationStarted')?.data;
  const causationId = history[history.length - 1]?.id;
  const event = { type, data } as Extract<ConversationEvent, { type: T }>;
  return { ...event, id: randomUUID(), metadata: { userId: owner?.ownerId, correlationId: turnId, causationId } };
}
