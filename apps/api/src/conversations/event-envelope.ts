import { conversationIdOf } from '@parley/conversation';
import { StoredEvent } from '@parley/event-store';

/** The event as the API serves it (docs/events.md), over JSON and SSE alike. */
export interface EventEnvelope {
  id: string;
  type: string;
  conversationId: string;
  version: number;
  position: string;
  occurredAt: string;
  data: unknown;
  metadata: StoredEvent['metadata'];
}

export function toEnvelope(e: StoredEvent): EventEnvelope {
  return {
    id: e.id,
    type: e.type,
    conversationId: conversationIdOf(e.streamId) ?? e.streamId,
    version: e.version,
    position: e.position,
    occurredAt: e.occurredAt.toISOString(),
    data: e.data,
    metadata: e.metadata,
  };
}
