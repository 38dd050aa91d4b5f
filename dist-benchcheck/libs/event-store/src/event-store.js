"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.EventStore = exports.EVENTS_CHANNEL = void 0;
exports.checkpointOf = checkpointOf;
const event_rows_1 = require("./event-rows");
const event_types_1 = require("./event.types");
/** The channel appends are announced on; the payload is the stream id. */
exports.EVENTS_CHANNEL = 'parley_events';
const UNIQUE_VIOLATION = '23505';
const MAX_ANY_RETRIES = 5;
/**
 * The Postgres event log. Its guards live in the schema: unique (stream_id, version) makes
 * optimistic concurrency exact, unique event_id makes retried appends harmless.
 */
class EventStore {
    constructor(pool) {
        this.pool = pool;
    }
    async append(streamId, events, opts) {
        if (events.length === 0)
            throw new Error('append needs at least one event');
        for (let attempt = 0;; attempt++) {
            try {
                return await this.withTransaction((client) => this.appendIn(client, streamId, events, opts.expectedVersion));
            }
            catch (e) {
                if (!isUniqueViolation(e))
                    throw e;
                const original = await this.findAppended(streamId, events);
                if (original)
                    return original; // a concurrent retry of the same append won
                if (e.constraint === 'events_event_id_key') {
                    throw new event_types_1.DuplicateEventIdError(events.map((x) => x.id));
                }
                // lost the race for the next version
                if (opts.expectedVersion !== 'any' || attempt >= MAX_ANY_RETRIES) {
                    throw new event_types_1.WrongExpectedVersionError(streamId, opts.expectedVersion, await this.streamVersion(streamId));
                }
            }
        }
    }
    /** Appends inside a caller's transaction (for writers that also update their own tables). */
    async appendIn(client, streamId, events, expected) {
        const original = await this.findAppended(streamId, events, client);
        if (original)
            return original;
        const current = await this.streamVersion(streamId, client);
        const ok = expected === 'any' || (expected === 'no_stream' ? current === 0 : current === expected);
        if (!ok)
            throw new event_types_1.WrongExpectedVersionError(streamId, expected, current);
        const { rows } = await client.query(`INSERT INTO events (event_id, stream_id, version, type, data, metadata)
       SELECT (e.doc->>'id')::uuid, $1, $2 + e.ord, e.doc->>'type', e.doc->'data', e.doc->'metadata'
         FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(doc, ord)
       ORDER BY e.ord
       RETURNING ${event_rows_1.EVENT_COLUMNS}`, [streamId, current, JSON.stringify(events.map((x) => ({ ...x, metadata: x.metadata ?? {} })))]);
        await client.query('SELECT pg_notify($1, $2)', [exports.EVENTS_CHANNEL, streamId]);
        const stored = rows.map(event_rows_1.toStoredEvent).sort((a, b) => a.version - b.version);
        return { nextExpectedVersion: current + events.length, events: stored };
    }
    async streamVersion(streamId, client = this.pool) {
        const { rows } = await client.query('SELECT max(version) AS v FROM events WHERE stream_id = $1', [streamId]);
        return rows[0].v ?? 0;
    }
    /** Events of one stream with version > after, oldest first. Versions commit in order. */
    async readStream(streamId, opts = {}) {
        const { rows } = await this.pool.query(`SELECT ${event_rows_1.EVENT_COLUMNS} FROM events
        WHERE stream_id = $1 AND version > $2 AND version <= $3
        ORDER BY version LIMIT $4`, [streamId, opts.after ?? 0, opts.upTo ?? 2 ** 31 - 1, opts.limit ?? 10_000]);
        return rows.map(event_rows_1.toStoredEvent);
    }
    /**
     * The global log after a checkpoint, in commit-safe order: only events of transactions below
     * the oldest one still in flight (pg_snapshot_xmin), ordered by (transaction id, position),
     * all in one statement so the snapshot and the read agree.
     */
    async readAll(opts = {}) {
        const after = opts.after ?? event_types_1.LOG_START;
        const { rows } = await this.pool.query(`SELECT ${event_rows_1.EVENT_COLUMNS} FROM events
        WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
          AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY transaction_id, position
        LIMIT $3`, [after.transactionId, after.position, opts.limit ?? 1_000]);
        return rows.map(event_rows_1.toStoredEvent);
    }
    async withTransaction(work) {
        const client = await this.pool.connect();
        try {
            await client.query('BEGIN');
            const result = await work(client);
            await client.query('COMMIT');
            return result;
        }
        catch (e) {
            await client.query('ROLLBACK').catch(() => undefined);
            throw e;
        }
        finally {
            client.release();
        }
    }
    /** The stored result of an earlier append of exactly these event ids to this stream, if any. */
    async findAppended(streamId, events, client = this.pool) {
        const { rows } = await client.query(`SELECT ${event_rows_1.EVENT_COLUMNS} FROM events WHERE event_id = ANY($1::uuid[]) ORDER BY version`, [events.map((e) => e.id)]);
        if (rows.length === 0)
            return undefined;
        const sameAppend = rows.length === events.length && rows.every((r) => r.stream_id === streamId);
        if (!sameAppend)
            throw new event_types_1.DuplicateEventIdError(rows.map((r) => r.event_id));
        const stored = rows.map(event_rows_1.toStoredEvent);
        return { nextExpectedVersion: stored[stored.length - 1].version, events: stored };
    }
}
exports.EventStore = EventStore;
function isUniqueViolation(e) {
    return e?.code === UNIQUE_VIOLATION;
}
function checkpointOf(event) {
    return { transactionId: event.transactionId, position: event.position };
}
//# sourceMappingURL=event-store.js.map