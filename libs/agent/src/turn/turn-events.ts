import { randomUUID } from 'node:crypto';
import { ConversationEvent, ConversationEventType } from '@parley/conversation';
import { deterministicId, NewEvent, traceMetadata } from '@parley/event-store';
import { StoppedAttempt } from '../llm/llm.types';

/** What a turn's next event follows from: the conversation's owner and its last event. */
export interface EventOrigin {
  ownerId: string | null;
  lastEventId: string | undefined;
}

/**
 * Agent events name the owner, the turn (correlation), the event they follow from (causation) and
 * the span they were made under (traceparent), so a turn resumed elsewhere continues its trace.
 */
export function turnEvent<T extends ConversationEventType>(
  at: EventOrigin,
  turnId: string,
  type: T,
  data: Extract<ConversationEvent, { type: T }>['data'],
  id: string = randomUUID(),
): NewEvent<ConversationEvent> {
  const event = { type, data } as Extract<ConversationEvent, { type: T }>;
  return {
    ...event,
    id,
    metadata: {
      userId: at.ownerId ?? undefined,
      correlationId: turnId,
      causationId: at.lastEventId,
      ...traceMetadata(),
    },
  };
}

/**
 * ModelCallStopped for each billed attempt of a call that stopped; `cancelled`: the log shows the
 * turn cancelled. Ids come from the turn, the call and the attempt (the provider's message id), so
 * an append made again (a retry, another worker) adds nothing.
 */
export function modelCallStopped(
  at: EventOrigin,
  turnId: string,
  iteration: number,
  attempts: StoppedAttempt[],
  { cancelled = false } = {},
): NewEvent<ConversationEvent>[] {
  return attempts.map((a) =>
    turnEvent(
      at,
      turnId,
      'ModelCallStopped',
      {
        turnId,
        iteration,
        model: a.model,
        usage: a.usage,
        reason: a.cause === 'broken' ? 'broken' : cancelled ? 'cancelled' : 'aborted',
      },
      deterministicId('ModelCallStopped', turnId, String(iteration), a.messageId),
    ),
  );
}
