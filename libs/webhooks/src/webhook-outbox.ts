import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { CheckpointMove, checkpointMoveSql, movesFromStart } from '@parley/event-store';
import { bookReadyMessage, bookReadyMessageId, LoggedMessage, WebhookMessage } from './webhook-messages';

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

/** What one endpoint, and one reader, may have in flight at once (docs/webhooks.md, "Fair delivery"). */
export interface InFlightCaps {
  perEndpoint: number;
  perReader: number;
}

/** The advisory lock takers of due deliveries wait for each other on (one at a time, briefly). */
const TAKE_LOCK = 0x77686474; // 'whdt'

/** The outbox of deliveries (migration 027): written from the log, taken by senders, deleted once delivered. */
@Injectable()
export class WebhookOutbox {
  constructor(@Inject(Pool) private readonly db: Pick<Pool, 'query'>) {}

  /**
   * Writes a delivery of each message to every endpoint that asked for its kind, is enabled, and
   * belongs to the conversation's owner, and moves the webhooks consumer's checkpoint, in one
   * statement: nothing is written unless the checkpoint was still at `move.from` (another runner
   * moved it first). An endpoint registered after the event gets none. A fork's copies of its
   * source's events (written in its ConversationStarted's transaction) are not told again, nor is
   * an event erased meanwhile. Written again (a replay), nothing changes.
   */
  async recordLogged(messages: LoggedMessage[], move: CheckpointMove): Promise<{ moved: boolean; written: number }> {
    const rows = messages.map((m) => ({
      message_id: m.messageId,
      type: m.message.type,
      payload: m.message,
      event_id: m.eventId,
      transaction_id: m.transactionId,
      occurred_at: m.occurredAt,
    }));
    const checkpoint = checkpointMoveSql(move, 2);
    const { rows: result } = await this.db.query<{ moved: number; written: number }>({
      name: movesFromStart(move) ? 'parley_webhooks_record_from_start' : 'parley_webhooks_record',
      text: `WITH moved AS (${checkpoint.sql}),
         logged AS (
           -- the events still in the log, each with its conversation's owner; not a fork's copies
           SELECT m.*, s.data->>'ownerId' AS owner_id
             FROM jsonb_to_recordset($1::jsonb) AS m(message_id text, type text, payload jsonb, event_id uuid,
                                                     transaction_id text, occurred_at timestamptz)
             JOIN events ev ON ev.event_id = m.event_id
             JOIN events s ON s.stream_id = ev.stream_id AND s.version = 1
            WHERE jsonb_typeof(s.data->'ownerId') = 'string'
              AND (jsonb_typeof(s.data->'forkedFrom') IS DISTINCT FROM 'object'
                   OR s.transaction_id <> m.transaction_id::xid8)),
         written AS (
           INSERT INTO webhook_deliveries (endpoint_id, message_id, type, payload, event_id)
           SELECT ep.id, l.message_id, l.type, l.payload, l.event_id
             FROM logged l
             JOIN webhook_endpoints ep ON ep.owner_id = l.owner_id AND l.type = ANY (ep.events)
                                      AND ep.disabled_at IS NULL AND ep.created_at <= l.occurred_at
            WHERE EXISTS (SELECT 1 FROM moved)
           ON CONFLICT DO NOTHING
           RETURNING 1)
       SELECT (SELECT count(*) FROM moved)::int AS moved, (SELECT count(*) FROM written)::int AS written`,
      values: [JSON.stringify(rows), ...checkpoint.values],
    });
    return { moved: result[0].moved === 1, written: result[0].written };
  }

  /**
   * Turns up to `limit` notes of books made ready (migration 034's trigger writes them with the
   * statement that makes a book ready) into a book.ready delivery for each of the owner's enabled
   * endpoints that asked for it and existed then, and deletes the notes. Run it in a transaction:
   * the notes go with their deliveries, and a note another sender holds is left to it.
   */
  async relayReadyBooks(limit: number): Promise<number> {
    const { rows } = await this.db.query<{
      book_id: string;
      owner_id: string;
      title: string;
      ready_at: string;
      ready_ms: string;
    }>(
      `WITH taken AS (
         DELETE FROM webhook_books_ready WHERE book_id IN (
           SELECT book_id FROM webhook_books_ready ORDER BY ready_at LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING book_id, ready_at)
       SELECT t.book_id, b.owner_id, b.title, t.ready_at::text AS ready_at, -- to the microsecond, for the endpoints
              floor(extract(epoch FROM t.ready_at) * 1000)::bigint AS ready_ms -- the message's, cut to the millisecond
         FROM taken t JOIN books b ON b.id = t.book_id`,
      [limit],
    );
    if (rows.length === 0) return 0;
    const messages = rows.map((r) => {
      const book = { bookId: r.book_id, title: r.title, readyAt: new Date(Number(r.ready_ms)) };
      return {
        message_id: bookReadyMessageId(book.bookId),
        payload: bookReadyMessage(book),
        book_id: book.bookId,
        owner_id: r.owner_id,
        ready_at: r.ready_at,
      };
    });
    const { rowCount } = await this.db.query(
      `INSERT INTO webhook_deliveries (endpoint_id, message_id, type, payload, book_id)
       SELECT ep.id, m.message_id, 'book.ready', m.payload, m.book_id
         FROM jsonb_to_recordset($1::jsonb) AS m(message_id text, payload jsonb, book_id uuid, owner_id text,
                                                 ready_at timestamptz)
         JOIN webhook_endpoints ep ON ep.owner_id = m.owner_id AND 'book.ready' = ANY (ep.events)
                                  AND ep.disabled_at IS NULL AND ep.created_at <= m.ready_at
       ON CONFLICT DO NOTHING`,
      [JSON.stringify(messages)],
    );
    return rowCount ?? 0;
  }

  /**
   * Whether a look for due deliveries could find any: a delivery due to an enabled endpoint (the
   * caps aside), or a book made ready to tell. One statement, where a look is a transaction of four.
   */
  async anythingDue(): Promise<boolean> {
    const { rows } = await this.db.query<{ due: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
                       WHERE d.next_attempt_at <= now() AND e.disabled_at IS NULL)
           OR EXISTS (SELECT 1 FROM webhook_books_ready) AS due`,
    );
    return rows[0].due;
  }

  /**
   * Takes up to `limit` due deliveries of enabled endpoints, each for `leaseMs`: a sender that
   * dies holding one lets another take it once the lease runs out. Each take counts a try.
   *
   * Fairly: an endpoint has at most `caps.perEndpoint` deliveries in flight (leased, by any
   * worker) and a reader at most `caps.perReader`, so one reader's slow receivers hold their
   * share of the senders, not all of them; deliveries over a cap are skipped, not waited for,
   * and a reader's share goes round their endpoints. Run it in a transaction: takers wait for
   * each other on an advisory lock, then count what is in flight with a snapshot taken after it.
   */
  async takeDue(limit: number, leaseMs: number, caps: InFlightCaps): Promise<DueDelivery[]> {
    await this.db.query('SELECT pg_advisory_xact_lock($1)', [TAKE_LOCK]);
    const { rows } = await this.db.query<{
      id: string;
      endpoint_id: string;
      url: string;
      secret: string;
      message_id: string;
      payload: WebhookMessage;
      attempts: number;
    }>(
      `WITH sending AS (
         SELECT d.endpoint_id, e.owner_id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
          WHERE d.leased_until IS NOT NULL AND d.leased_until > now()),
       busy_endpoints AS (SELECT endpoint_id, count(*) AS n FROM sending GROUP BY endpoint_id),
       busy_owners AS (SELECT owner_id, count(*) AS n FROM sending GROUP BY owner_id),
       due AS (
         SELECT d.id, d.next_attempt_at, e.owner_id, coalesce(bo.n, 0) AS owner_busy,
                coalesce(be.n, 0) + row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id)
                  AS endpoint_slot
           FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
           LEFT JOIN busy_endpoints be ON be.endpoint_id = d.endpoint_id
           LEFT JOIN busy_owners bo ON bo.owner_id = e.owner_id
          WHERE d.next_attempt_at <= now() AND e.disabled_at IS NULL
            AND coalesce(be.n, 0) < $3 AND coalesce(bo.n, 0) < $4),
       fair AS (
         SELECT id, next_attempt_at,
                owner_busy + row_number() OVER (PARTITION BY owner_id ORDER BY endpoint_slot, next_attempt_at, id)
                  AS owner_slot
           FROM due WHERE endpoint_slot <= $3),
       chosen AS (SELECT id FROM fair WHERE owner_slot <= $4 ORDER BY next_attempt_at, id LIMIT $1)
       UPDATE webhook_deliveries d
          SET attempts = d.attempts + 1,
              next_attempt_at = now() + $2 * interval '1 millisecond',
              leased_until = now() + $2 * interval '1 millisecond'
         FROM chosen, webhook_endpoints e
        WHERE d.id = chosen.id AND e.id = d.endpoint_id
          AND d.next_attempt_at <= now() -- taken meanwhile by a sender without the lock (an older release): not again
       RETURNING d.id, d.endpoint_id, e.url, e.secret, d.message_id, d.payload, d.attempts`,
      [limit, leaseMs, caps.perEndpoint, caps.perReader],
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
      `UPDATE webhook_deliveries
          SET last_error = $2, next_attempt_at = now() + $3 * interval '1 millisecond', leased_until = NULL
        WHERE id = $1`,
      [id, error, delayMs],
    );
  }

  /**
   * The last try failed too: the endpoint is disabled (listed so, sent nothing more). Its
   * deliveries stay pending until its reader deletes it.
   */
  async giveUp(delivery: DueDelivery, error: string): Promise<void> {
    await this.db.query(
      `WITH d AS (UPDATE webhook_deliveries SET last_error = $3, leased_until = NULL WHERE id = $1)
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
