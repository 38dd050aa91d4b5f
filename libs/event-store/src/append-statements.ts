import { announcedStreamsCte, EVENTS_CHANNEL } from './announcement';
import { EVENT_COLUMNS, EventRow } from './event-rows';
import { NewEvent } from './event.types';

/**
 * One stream's append inside a caller's transaction: it reads the stream's version, checks the
 * expected one and inserts at the versions after it. When the check fails nothing is inserted and
 * the row carries the current version for the 409. Prepared once per connection (named), as are
 * the others: planning these cost more than running them.
 */
export const APPEND_SQL = `
  WITH current AS (
    SELECT coalesce(max(version), 0) AS v FROM events WHERE stream_id = $1
  ), allowed AS (
    SELECT v FROM current WHERE $2::int IS NULL OR v = $2::int
  ), inserted AS (
    INSERT INTO events (event_id, stream_id, version, type, data, metadata)
    SELECT (e.doc->>'id')::uuid, $1, allowed.v + e.ord, e.doc->>'type', e.doc->'data', e.doc->'metadata'
      FROM allowed, jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(doc, ord)
     ORDER BY e.ord
    RETURNING ${EVENT_COLUMNS}
  )
  SELECT current.v AS current_version, inserted.* FROM current LEFT JOIN inserted ON true`;

/** The same, announced as it commits (one append from the pool, made alone). */
export const APPEND_ANNOUNCED_SQL = APPEND_SQL.replace(
  '  SELECT current.v AS current_version, inserted.* FROM current LEFT JOIN inserted ON true',
  `${announcedStreamsCte(EVENTS_CHANNEL)}
  SELECT current.v AS current_version, inserted.*, (SELECT count(*) FROM announced) AS announced_streams
    FROM current LEFT JOIN inserted ON true`,
);

/**
 * Appends to several streams (one append each) in one statement and its implicit transaction,
 * announced as it commits: $1 is `[{streamId, expectedVersion, events}]`. Each append is checked
 * against its own stream's version; one that fails inserts nothing and its rows carry the version
 * for the 409. Rows are inserted stream by stream in stream id order, so two statements that touch
 * the same streams wait for each other in one order, never in a deadlock. A row per append that
 * inserted nothing, a row per event inserted, each with the append's place in $1 (append_ord).
 * (The announcements are asked for in the select list: a join to them that nothing reads would be
 * planned away.)
 */
export const APPEND_MANY_SQL = `
  WITH appends AS (
    SELECT a.ord AS append_ord, a.doc->>'streamId' AS stream_id,
           (a.doc->>'expectedVersion')::int AS expected, a.doc->'events' AS events
      FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS a(doc, ord)
  ), current AS (
    SELECT appends.*, coalesce((SELECT max(version) FROM events WHERE events.stream_id = appends.stream_id), 0) AS v
      FROM appends
  ), inserted AS (
    INSERT INTO events (event_id, stream_id, version, type, data, metadata)
    SELECT (e.doc->>'id')::uuid, c.stream_id, c.v + e.ord, e.doc->>'type', e.doc->'data', e.doc->'metadata'
      FROM current c, jsonb_array_elements(c.events) WITH ORDINALITY AS e(doc, ord)
     WHERE c.expected IS NULL OR c.v = c.expected
     ORDER BY c.stream_id, e.ord
    RETURNING ${EVENT_COLUMNS}
  )${announcedStreamsCte(EVENTS_CHANNEL)}
  SELECT c.append_ord, c.v AS current_version, inserted.*, (SELECT count(*) FROM announced) AS announced_streams
    FROM current c LEFT JOIN inserted ON inserted.stream_id = c.stream_id`;

/** The events as the statements take them ($3, or each append's `events`): id, type, data, metadata. */
export const appendDocs = (events: NewEvent[]) =>
  events.map((x) => ({ id: x.id, type: x.type, data: x.data, metadata: x.metadata ?? {} }));

/** A row of these statements: the version the append was decided on, and an inserted event's columns. */
export type AppendRow = Partial<EventRow> & { current_version: number };

/**
 * What a statement did for one append: the stream's version it was decided on, and the rows it
 * inserted, in no set order (none when the expected version did not match).
 */
export interface AppendOutcome {
  currentVersion: number;
  inserted: EventRow[];
}

/** The outcome of a one-stream statement (a single row with null columns when it inserted nothing). */
export function oneStreamOutcome(rows: AppendRow[]): AppendOutcome {
  return { currentVersion: rows[0].current_version, inserted: rows[0].event_id == null ? [] : (rows as EventRow[]) };
}
