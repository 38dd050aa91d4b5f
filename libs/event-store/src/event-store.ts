import { Pool, PoolClient } from 'pg';
import { EVENT_COLUMNS, EventRow, toStoredEvent } from './event-rows';
import { announcementOf, EVENTS_CHANNEL } from './announcement';
import { AppendBatches } from './append-batches';
import { APPEND_SQL, appendDocs, AppendOutcome, AppendRow, oneStreamOutcome } from './append-statements';
import { inTransaction } from './transaction';
import { inSpan } from './trace-context';
import {
  AppendResult,
  DuplicateEventIdError,
  EventShape,
  ExpectedVersion,
  LogCheckpoint,
  LogTail,
  LOG_START,
  NewEvent,
  StoredEvent,
  WrongExpectedVersionError,
} from './event.types';

const UNIQUE_VIOLATION = '23505';
const MAX_ANY_RETRIES = 5;

/**
 * The Postgres event log. Its guards live in the schema: unique (stream_id, version) makes
 * optimistic concurrency exact, unique event_id makes retried appends harmless.
 */
export class EventStore {
  private readonly batches: AppendBatches;

  constructor(readonly pool: Pool) {
    this.batches = new AppendBatches(pool);
  }

  /**
   * Appends events of the stream's contract E (inferred from the events, or given: append<E>).
   * Its span is named by the stream's category (`append conversation`): a span name per stream
   * would make every stream a name of its own in a tracing backend.
   */
  append<E extends EventShape = EventShape>(
    streamId: string,
    events: NewEvent<E>[],
    opts: { expectedVersion: ExpectedVersion },
  ): Promise<AppendResult<E>> {
    const attributes = {
      'db.system.name': 'postgresql',
      'db.operation.name': 'append',
      'parley.stream.id': streamId,
      'parley.events.count': events.length,
      'parley.events.types': [...new Set(events.map((e) => e.type))],
    };
    return inSpan(`append ${streamCategory(streamId)}`, { attributes }, () =>
      this.appendWithRetries(streamId, events, opts),
    );
  }

  /**
   * The version of each stream (0 for a stream without events), all in one statement: one
   * backward probe of the (stream_id, version) index per stream, however long the streams are.
   */
  async versions(streamIds: string[]): Promise<Map<string, number>> {
    if (streamIds.length === 0) return new Map();
    const { rows } = await this.pool.query<{ id: string; version: number | null }>(
      `SELECT s.id, (SELECT max(version) FROM events WHERE stream_id = s.id) AS version
         FROM unnest($1::text[]) AS s(id)`,
      [streamIds],
    );
    return new Map(rows.map((r) => [r.id, r.version ?? 0]));
  }

  /** How many events the log holds (a rebuild's progress is told against it). */
  async count(): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>('SELECT count(*) AS n FROM events');
    return Number(rows[0].n);
  }

  private async appendWithRetries<E extends EventShape>(
    streamId: string,
    events: NewEvent<E>[],
    opts: { expectedVersion: ExpectedVersion },
  ): Promise<AppendResult<E>> {
    if (events.length === 0) throw new Error('append needs at least one event');
    for (let attempt = 0; ; attempt++) {
      try {
        const outcome = await this.batches.append({
          streamId,
          expectedVersion: expectedVersionOf(opts.expectedVersion),
          events: appendDocs(events),
        });
        return await this.resultOf(this.pool, streamId, events, opts.expectedVersion, outcome);
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

  /**
   * Appends inside a caller's transaction (for writers that also update their own tables). The
   * announcement rides in the transaction, so listeners hear of it when (and only if) it commits.
   */
  async appendIn<E extends EventShape = EventShape>(
    client: PoolClient,
    streamId: string,
    events: NewEvent<E>[],
    expected: ExpectedVersion,
  ): Promise<AppendResult<E>> {
    const result = await this.appendWith(client, streamId, events, expected);
    await client.query('SELECT pg_notify($1, $2)', [
      EVENTS_CHANNEL,
      announcementOf(streamId, result.nextExpectedVersion),
    ]);
    return result;
  }

  /**
   * One append in the caller's transaction. A writer that took the next version between this
   * statement's check and its insert makes the insert violate unique (stream_id, version): that is
   * a lost race, WrongExpectedVersionError as appendWithRetries says it, not a fault (the caller's
   * transaction is aborted; it retries from a fresh read, as handleCommand does).
   */
  private async appendWith<E extends EventShape>(
    tx: PoolClient,
    streamId: string,
    events: NewEvent<E>[],
    expected: ExpectedVersion,
  ): Promise<AppendResult<E>> {
    let rows: AppendRow[];
    try {
      ({ rows } = await tx.query<AppendRow>({
        name: 'parley_append',
        text: APPEND_SQL,
        values: [streamId, expectedVersionOf(expected), JSON.stringify(appendDocs(events))],
      }));
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      if ((e as { constraint?: string }).constraint === 'events_event_id_key') {
        throw new DuplicateEventIdError(events.map((x) => x.id));
      }
      // read outside the aborted transaction
      throw new WrongExpectedVersionError(streamId, expected, await this.streamVersion(streamId));
    }
    return this.resultOf(tx, streamId, events, expected, oneStreamOutcome(rows));
  }

  /** An append's result from what its statement inserted, or why it inserted nothing. */
  private async resultOf<E extends EventShape>(
    db: Pick<Pool, 'query'>,
    streamId: string,
    events: NewEvent<E>[],
    expected: ExpectedVersion,
    { currentVersion, inserted }: AppendOutcome,
  ): Promise<AppendResult<E>> {
    if (inserted.length === 0) {
      // a retry of an append that already went in finds the stream past its expected version
      const original = await this.findAppended<E>(streamId, events, db);
      if (original) return original;
      throw new WrongExpectedVersionError(streamId, expected, currentVersion);
    }
    const stored = inserted.map(toStoredEvent<E>).sort((a, b) => a.version - b.version);
    return { nextExpectedVersion: currentVersion + events.length, events: stored };
  }

  /**
   * Erases a stream: appends its tombstone at `expectedVersion` + 1 and deletes every event before
   * it, in one transaction, so the tombstone is all that is left of the stream (docs/erasure.md).
   * The append is what orders the erasure with other writers: one that appended meanwhile makes
   * this fail (WrongExpectedVersionError), and one that tries after finds the tombstone. `within`
   * runs in the same transaction, before the delete, with the events about to go: for what must
   * outlive them (a ledger) and what is derived from them (read models). Fold snapshots and dead
   * letters of the stream go too.
   */
  async eraseStream<E extends EventShape = EventShape>(
    streamId: string,
    tombstone: NewEvent<E>,
    opts: {
      expectedVersion: number;
      within?: (client: PoolClient, erased: StoredEvent<E>[]) => Promise<void>;
    },
  ): Promise<{ tombstone: StoredEvent<E>; erasedEvents: number }> {
    return this.withTransaction(async (tx) => {
      const erased = await this.readStream<E>(streamId, { upTo: opts.expectedVersion }, tx);
      const appended = await this.appendWith(tx, streamId, [tombstone], opts.expectedVersion);
      await opts.within?.(tx, erased);
      await tx.query(`SELECT set_config('parley.erasing_stream', $1, true)`, [streamId]);
      const { rowCount } = await tx.query('DELETE FROM events WHERE stream_id = $1 AND version < $2', [
        streamId,
        appended.events[0].version,
      ]);
      await tx.query('DELETE FROM fold_snapshots WHERE stream_id = $1', [streamId]);
      await tx.query('DELETE FROM consumer_dead_letters WHERE event_id = ANY($1::uuid[])', [erased.map((e) => e.id)]);
      await tx.query('SELECT pg_notify($1, $2)', [
        EVENTS_CHANNEL,
        announcementOf(streamId, appended.nextExpectedVersion),
      ]);
      return { tombstone: appended.events[0], erasedEvents: rowCount ?? 0 };
    });
  }

  /** These events as readers see them, in log order (`client`: the caller's transaction). */
  async readEvents<E extends EventShape = EventShape>(
    eventIds: string[],
    client: Pick<Pool, 'query'> = this.pool,
  ): Promise<StoredEvent<E>[]> {
    if (eventIds.length === 0) return [];
    const { rows } = await client.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE event_id = ANY($1::uuid[]) ORDER BY position`,
      [eventIds],
    );
    return rows.map(toStoredEvent<E>);
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
   * stream's contract, as its writers appended it (readStream<ConversationEvent>). `client`: a
   * replica's pool, for reads it may serve.
   */
  async readStream<E extends EventShape = EventShape>(
    streamId: string,
    opts: { after?: number; limit?: number; upTo?: number } = {},
    client: Pick<Pool, 'query'> = this.pool,
  ): Promise<StoredEvent<E>[]> {
    const { rows } = await client.query<EventRow>({
      name: 'parley_read_stream',
      text: `SELECT ${EVENT_COLUMNS} FROM events
                WHERE stream_id = $1 AND version > $2 AND version <= $3
                ORDER BY version LIMIT $4`,
      values: [streamId, opts.after ?? 0, opts.upTo ?? 2 ** 31 - 1, opts.limit ?? null], // no limit: folding callers need the whole stream
    });
    return rows.map(toStoredEvent<E>);
  }

  /**
   * The global log after a checkpoint, in commit-safe order: only events of transactions below
   * the oldest one still in flight (pg_snapshot_xmin), ordered by (transaction id, position),
   * all in one statement so the snapshot and the read agree. The order is by the xid8 column
   * itself, qualified, never by a text rendering of it.
   */
  /** The log's last event in tailing order (transaction, position); LOG_START for an empty log. */
  async head(): Promise<LogCheckpoint> {
    const { rows } = await this.pool.query<{ transaction_id: string; position: string }>(
      `SELECT transaction_id::text AS transaction_id, position::text AS position FROM events
        ORDER BY transaction_id DESC, position DESC LIMIT 1`,
    );
    return rows[0] ? { transactionId: rows[0].transaction_id, position: rows[0].position } : LOG_START;
  }

  /** Where a checkpointed consumer has got to (LOG_START before its first move). */
  async consumerCheckpoint(consumer: string): Promise<LogCheckpoint> {
    const { rows } = await this.pool.query<{ transaction_id: string; position: string }>(
      'SELECT transaction_id::text AS transaction_id, position::text AS position FROM consumer_checkpoints WHERE consumer = $1',
      [consumer],
    );
    return rows[0] ? { transactionId: rows[0].transaction_id, position: rows[0].position } : LOG_START;
  }

  async readAll(opts: { after?: LogCheckpoint; limit?: number } = {}): Promise<StoredEvent[]> {
    return (await this.readTail(opts)).events;
  }

  /**
   * readAll, and whether committed events wait beyond the horizon (an older transaction is still
   * open), from the same snapshot: a tailer then knows to look again soon rather than at its
   * next poll, whatever woke it.
   */
  async readTail(opts: { after?: LogCheckpoint; limit?: number } = {}): Promise<LogTail> {
    const after = opts.after ?? LOG_START;
    const { rows } = await this.pool.query<Partial<EventRow> & { held_back: boolean }>({
      name: 'parley_read_tail',
      text: `SELECT tail.*, held.held_back
               FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS horizon) h
               -- the newest event readable at all, from the index's end: an EXISTS here is planned as a scan of the table
               CROSS JOIN LATERAL (SELECT coalesce((SELECT transaction_id FROM events ORDER BY transaction_id DESC LIMIT 1) >= h.horizon, false) AS held_back) held
               LEFT JOIN LATERAL (
                 SELECT ${EVENT_COLUMNS}, events.transaction_id AS order_xid FROM events
                  WHERE (events.transaction_id, events.position) > ($1::xid8, $2::bigint)
                    AND events.transaction_id < h.horizon
                  ORDER BY events.transaction_id, events.position
                  LIMIT $3
               ) tail ON true
              ORDER BY tail.order_xid, tail.position`,
      values: [after.transactionId, after.position, opts.limit ?? 1_000],
    });
    const events = rows.filter((r) => r.event_id !== null).map((r) => toStoredEvent(r as EventRow));
    return { events, heldBack: rows[0]?.held_back ?? false };
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
    const stored = await this.readEvents<E>(
      events.map((e) => e.id),
      client,
    );
    if (stored.length === 0) return undefined;
    const sameAppend = stored.length === events.length && stored.every((e) => e.streamId === streamId);
    if (!sameAppend) throw new DuplicateEventIdError(stored.map((e) => e.id));
    stored.sort((a, b) => a.version - b.version);
    return { nextExpectedVersion: stored[stored.length - 1].version, events: stored };
  }
}

/** The version an append's statement checks: null for any. */
const expectedVersionOf = (expected: ExpectedVersion): number | null =>
  expected === 'any' ? null : expected === 'no_stream' ? 0 : expected;

/** `conversation` of `conversation-<id>`: what kind of stream, not which one. */
const streamCategory = (streamId: string): string => streamId.split('-')[0];

function isUniqueViolation(e: unknown): boolean {
  return (e as { code?: string })?.code === UNIQUE_VIOLATION;
}

/** Whether checkpoint `a` is at or past `b` in tailing order. */
export function reached(a: LogCheckpoint, b: LogCheckpoint): boolean {
  const [ta, tb] = [BigInt(a.transactionId), BigInt(b.transactionId)];
  return ta > tb || (ta === tb && BigInt(a.position) >= BigInt(b.position));
}

export function checkpointOf(event: Pick<StoredEvent, 'transactionId' | 'position'>): LogCheckpoint {
  return { transactionId: event.transactionId, position: event.position };
}
