import { Pool, PoolClient } from 'pg';
import { EVENT_COLUMNS, EventRow, toStoredEvent } from './event-rows';
import { inTransaction } from './transaction';
import {
  AppendResult,
  DuplicateEventIdError,
  EventShape,
  ExpectedVersion,
  LogCheckpoint,
  LOG_START,
  NewEvent,
  StoredEvent,
  WrongExpectedVersionError,
} from './event.types';

/** The channel appends are announced on; the payload is the stream id. */
export const EVENTS_CHANNEL = 'parley_events';

const UNIQUE_VIOLATION = '23505';
const MAX_ANY_RETRIES = 5;

/**
 * The Postgres event log. Its guards live in the schema: unique (stream_id, version) makes
 * optimistic concurrency exact, unique event_id makes retried appends harmless.
 */
export class EventStore {
  constructor(readonly pool: Pool) {}

  /** Appends events of the stream's contract E (inferred from the events, or given: append<E>). */
  async append<E extends EventShape = EventShape>(
    streamId: string,
    events: NewEvent<E>[],
    opts: { expectedVersion: ExpectedVersion },
  ): Promise<AppendResult<E>> {
    if (events.length === 0) throw new Error('append needs at least one event');
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.withTransaction((client) => this.appendIn(client, streamId, events, opts.expectedVersion));
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        const original = await this.findAppended<E>(streamId, events);
        if (original) return original; // a concurrent retry of the same append won
        if ((e as { constraint?: string }).constraint === 'events_event_id_key') {
          throw new DuplicateEventIdError(events.map((x) => x.id));
        }
        // lost the race for the next version
        if (opts.expectedVersion !== 'any' || attempt >= MAX_ANY_RETRIES) {
          throw new WrongExpectedVersionError(streamId, opts.expectedVersion, await this.streamVersion(streamId));
        }
      }
    }
  }

  /** Appends inside a caller's transaction (for writers that also update their own tables). */
  async appendIn<E extends EventShape = EventShape>(
    client: PoolClient,
    streamId: string,
    events: NewEvent<E>[],
    expected: ExpectedVersion,
  ): Promise<AppendResult<E>> {
    const original = await this.findAppended<E>(streamId, events, client);
    if (original) return original;
    const current = await this.streamVersion(streamId, client);
    const ok = expected === 'any' || (expected === 'no_stream' ? current === 0 : current === expected);
    if (!ok) throw new WrongExpectedVersionError(streamId, expected, current);
    const { rows } = await client.query<EventRow>(
      `INSERT INTO events (event_id, stream_id, version, type, data, metadata)
       SELECT (e.doc->>'id')::uuid, $1, $2 + e.ord, e.doc->>'type', e.doc->'data', e.doc->'metadata'
         FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(doc, ord)
       ORDER BY e.ord
       RETURNING ${EVENT_COLUMNS}`,
      [streamId, current, JSON.stringify(events.map((x) => ({ ...x, metadata: x.metadata ?? {} })))],
    );
    await client.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, streamId]);
    const stored = rows.map(toStoredEvent<E>).sort((a, b) => a.version - b.version);
    return { nextExpectedVersion: current + events.length, events: stored };
  }

  async streamVersion(streamId: string, client: Pick<Pool, 'query'> = this.pool): Promise<number> {
    const { rows } = await client.query<{ v: number | null }>(
      'SELECT max(version) AS v FROM events WHERE stream_id = $1',
      [streamId],
    );
    return rows[0].v ?? 0;
  }

  /**
   * Events of one stream with version > after, oldest first. Versions commit in order. E is the
   * stream's contract, as its writers appended it (readStream<ConversationEvent>).
   */
  async readStream<E extends EventShape = EventShape>(
    streamId: string,
    opts: { after?: number; limit?: number; upTo?: number } = {},
  ): Promise<StoredEvent<E>[]> {
    const { rows } = await this.pool.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events
        WHERE stream_id = $1 AND version > $2 AND version <= $3
        ORDER BY version LIMIT $4`,
      [streamId, opts.after ?? 0, opts.upTo ?? 2 ** 31 - 1, opts.limit ?? null], // no limit: folding callers need the whole stream
    );
    return rows.map(toStoredEvent<E>);
  }

  /**
   * The global log after a checkpoint, in commit-safe order: only events of transactions below
   * the oldest one still in flight (pg_snapshot_xmin), ordered by (transaction id, position),
   * all in one statement so the snapshot and the read agree. The order is by the xid8 column
   * itself, qualified, never by a text rendering of it.
   */
  async readAll(opts: { after?: LogCheckpoint; limit?: number } = {}): Promise<StoredEvent[]> {
    const after = opts.after ?? LOG_START;
    const { rows } = await this.pool.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events
        WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
          AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY events.transaction_id, events.position
        LIMIT $3`,
      [after.transactionId, after.position, opts.limit ?? 1_000],
    );
    return rows.map(toStoredEvent);
  }

  withTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, work);
  }

  /** The stored result of an earlier append of exactly these event ids to this stream, if any. */
  private async findAppended<E extends EventShape>(
    streamId: string,
    events: NewEvent<E>[],
    client: Pick<Pool, 'query'> = this.pool,
  ): Promise<AppendResult<E> | undefined> {
    const { rows } = await client.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE event_id = ANY($1::uuid[]) ORDER BY version`,
      [events.map((e) => e.id)],
    );
    if (rows.length === 0) return undefined;
    const sameAppend = rows.length === events.length && rows.every((r) => r.stream_id === streamId);
    if (!sameAppend) throw new DuplicateEventIdError(rows.map((r) => r.event_id));
    const stored = rows.map(toStoredEvent<E>);
    return { nextExpectedVersion: stored[stored.length - 1].version, events: stored };
  }
}

function isUniqueViolation(e: unknown): boolean {
  return (e as { code?: string })?.code === UNIQUE_VIOLATION;
}

export function checkpointOf(event: Pick<StoredEvent, 'transactionId' | 'position'>): LogCheckpoint {
  return { transactionId: event.transactionId, position: event.position };
}
