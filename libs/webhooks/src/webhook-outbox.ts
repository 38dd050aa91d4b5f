import { Pool } from 'pg';
import { LoggedMessage, WebhookMessage } from './webhook-messages';

/** A delivery taken to be sent: where, signed with what, and which try this is. */
export interface DueDelivery {
  id: string;
  endpointId: string;
  url: string;
  secret: string;
  messageId: string;
  payload: WebhookMessage;
  /** 1 for the first try */
  attempt: number;
}

/** The outbox of deliveries (migration 027): written from the log, taken by senders, deleted once delivered. */
export class WebhookOutbox {
  constructor(private readonly db: Pick<Pool, 'query'>) {}

  /**
   * Writes a delivery of each message to every endpoint that asked for its kind, is enabled, and
   * belongs to the conversation's owner; an endpoint registered after the event gets none. A
   * fork's copies of its source's events (written in its ConversationStarted's transaction) are
   * not told again, nor is an event erased meanwhile. Written again (a replay), nothing changes.
   */
  async recordLogged(messages: LoggedMessage[]): Promise<number> {
    if (messages.length === 0) return 0;
    const rows = messages.map((m) => ({
      message_id: m.messageId,
      type: m.message.type,
      payload: m.message,
      event_id: m.eventId,
      stream_id: m.streamId,
      transaction_id: m.transactionId,
      occurred_at: m.occurredAt,
    }));
    const { rowCount } = await this.db.query(
      `INSERT INTO webhook_deliveries (endpoint_id, message_id, type, payload, event_id)
       SELECT ep.id, m.message_id, m.type, m.payload, m.event_id
         FROM jsonb_to_recordset($1::jsonb) AS m(message_id text, type text, payload jsonb, event_id uuid,
                                                 stream_id text, transaction_id text, occurred_at timestamptz)
         JOIN events ev ON ev.event_id = m.event_id
         JOIN events s ON s.stream_id = m.stream_id AND s.version = 1
         JOIN webhook_endpoints ep ON ep.owner_id = s.data->>'ownerId' AND m.type = ANY (ep.events)
                                  AND ep.disabled_at IS NULL AND ep.created_at <= m.occurred_at
        WHERE (jsonb_typeof(s.data->'forkedFrom') IS DISTINCT FROM 'object' OR s.transaction_id::text <> m.transaction_id)
       ON CONFLICT DO NOTHING`,
      [JSON.stringify(rows)],
    );
    return rowCount ?? 0;
  }

  /**
   * Takes up to `limit` due deliveries of enabled endpoints, each for `leaseMs`: a sender that
   * dies holding one lets another take it once the lease runs out. Each take counts a try.
   */
  async takeDue(limit: number, leaseMs: number): Promise<DueDelivery[]> {
    const { rows } = await this.db.query<{
      id: string;
      endpoint_id: string;
      url: string;
      secret: string;
      message_id: string;
      payload: WebhookMessage;
      attempts: number;
    }>(
      `WITH due AS (
         SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
          WHERE d.next_attempt_at <= now() AND e.disabled_at IS NULL
          ORDER BY d.next_attempt_at
          LIMIT $1
          FOR UPDATE OF d SKIP LOCKED)
       UPDATE webhook_deliveries d
          SET attempts = d.attempts + 1, next_attempt_at = now() + $2 * interval '1 millisecond'
         FROM due, webhook_endpoints e
        WHERE d.id = due.id AND e.id = d.endpoint_id
       RETURNING d.id, d.endpoint_id, e.url, e.secret, d.message_id, d.payload, d.attempts`,
      [limit, leaseMs],
    );
    return rows.map((r) => ({
      id: r.id,
      endpointId: r.endpoint_id,
      url: r.url,
      secret: r.secret,
      messageId: r.message_id,
      payload: r.payload,
      attempt: r.attempts,
    }));
  }

  /** The receiver took it: done. */
  async delivered(id: string): Promise<void> {
    await this.db.query('DELETE FROM webhook_deliveries WHERE id = $1', [id]);
  }

  /** A failed try: the next one after `delayMs`. */
  async retryLater(id: string, error: string, delayMs: number): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET last_error = $2, next_attempt_at = now() + $3 * interval '1 millisecond' WHERE id = $1`,
      [id, error, delayMs],
    );
  }

  /**
   * The last try failed too: the endpoint is disabled (listed so, sent nothing more). Its
   * deliveries stay pending until its reader deletes it.
   */
  async giveUp(delivery: DueDelivery, error: string): Promise<void> {
    await this.db.query(
      `WITH d AS (UPDATE webhook_deliveries SET last_error = $3 WHERE id = $1)
       UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $4
        WHERE id = $2 AND disabled_at IS NULL`,
      [
        delivery.id,
        delivery.endpointId,
        error,
        `delivery ${delivery.messageId} failed ${delivery.attempt} times; last: ${error}`.slice(0, 1000),
      ],
    );
  }
}
