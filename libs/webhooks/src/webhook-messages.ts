import { createHash } from 'node:crypto';
import { approvalRequestOf, ConversationEvent, conversationIdOf, isConversationEvent } from '@parley/conversation';
import { StoredEvent } from '@parley/event-store';

/** The kinds an endpoint may ask for (docs/webhooks.md): stored contracts, never renamed. */
export const WEBHOOK_KINDS = ['turn.ended', 'batch.completed', 'book.ready', 'turn.approval_requested'] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

export const isWebhookKind = (kind: string): kind is WebhookKind => (WEBHOOK_KINDS as readonly string[]).includes(kind);

/** A delivery's body, as Standard Webhooks shapes it. */
export interface WebhookMessage {
  type: WebhookKind;
  /** when it happened (ISO 8601, UTC) */
  timestamp: string;
  data: Record<string, unknown>;
}

/** A message told of an event of the log: its webhook-id and the stream whose owner may see it. */
export interface LoggedMessage {
  /** the webhook-id: the same at every try, replay and endpoint, for the receiver's de-duplication */
  messageId: string;
  eventId: string;
  streamId: string;
  /** the event's writing transaction: a fork's copies share their ConversationStarted's */
  transactionId: string;
  occurredAt: string;
  message: WebhookMessage;
}

/** The webhook-id of the message an event of the log is told as. */
export const messageIdOf = (eventId: string): string => `msg_${eventId}`;

/** The message a conversation event is told as (a turn's end, a batch's completion), or null. */
export function messageOf(event: StoredEvent): LoggedMessage | null {
  if (!isConversationEvent(event)) return null;
  const conversationId = conversationIdOf(event.streamId);
  if (!conversationId) return null;
  const e = event as StoredEvent<ConversationEvent>;
  const told = toldAs(e, conversationId);
  if (!told) return null;
  const timestamp = e.occurredAt.toISOString();
  return {
    messageId: messageIdOf(e.id),
    eventId: e.id,
    streamId: e.streamId,
    transactionId: e.transactionId,
    occurredAt: timestamp,
    message: { ...told, timestamp },
  };
}

function toldAs(e: StoredEvent<ConversationEvent>, conversationId: string): Omit<WebhookMessage, 'timestamp'> | null {
  const at = { conversationId, version: e.version };
  switch (e.type) {
    case 'AssistantReplied':
      return {
        type: 'turn.ended',
        data: { ...at, turnId: e.data.turnId, status: 'replied', messageId: e.data.messageId },
      };
    case 'TurnFailed':
      return {
        type: 'turn.ended',
        data: {
          ...at,
          turnId: e.data.turnId,
          status: 'failed',
          error: { code: e.data.code, message: e.data.message, retryable: e.data.retryable },
        },
      };
    case 'TurnCancelled':
      return { type: 'turn.ended', data: { ...at, turnId: e.data.turnId, status: 'cancelled' } };
    case 'ToolApprovalRequested':
      // what a backend needs to ask the reader: which call of which turn, and what it would do
      return {
        type: 'turn.approval_requested',
        data: { ...at, turnId: e.data.turnId, ...approvalRequestOf(e.data) },
      };
    case 'BatchCompleted':
      return {
        type: 'batch.completed',
        data: { ...at, batchId: e.data.batchId, answered: e.data.answered, failures: e.data.failures },
      };
    default:
      return null;
  }
}

/** A book made ready, as its note (migration 034) and the books table tell it. */
export interface ReadyBook {
  bookId: string;
  title: string;
  /** when the statement that made it ready ran */
  readyAt: Date;
}

/**
 * The webhook-id of a book's book.ready: the md5 of `book.ready/<id>` written as a uuid, the same
 * at every try and endpoint, and the id migration 027's trigger gave it.
 */
export function bookReadyMessageId(bookId: string): string {
  const hex = createHash('md5').update(`book.ready/${bookId}`).digest('hex');
  return `msg_${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The message a book made ready is told as: its id and title, at the time it became ready (milliseconds, UTC). */
export function bookReadyMessage(book: ReadyBook): WebhookMessage {
  return {
    type: 'book.ready',
    timestamp: book.readyAt.toISOString(),
    data: { bookId: book.bookId, title: book.title },
  };
}
