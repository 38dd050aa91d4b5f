import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { eventDataSql } from './event-rows';

/**
 * Event types, data fields and stream-id prefixes the callers name are written into the statements
 * as literals, not bound, so that the planner matches the log's partial and expression indexes
 * (`WHERE type IN (…)`, `(data ->> 'turnId')`) as it always did; hence only plain names are taken.
 */
function literal(name: string): string {
  if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(name)) throw new Error(`not a plain name for a log query: ${name}`);
  return `'${name}'`;
}
const literals = (names: readonly string[]): string => names.map(literal).join(', ');

/**
 * Event types to match: `types`, tested after `indexed` when a partial index's predicate names a
 * wider set (`type IN (indexed) AND type IN (types)` lets the planner prove the index applies).
 */
export interface TypeMatch {
  types: readonly string[];
  indexed?: readonly string[];
}
const typeIs = (alias: string, t: TypeMatch | readonly string[]): string => {
  const { types, indexed } = 'types' in t ? t : { types: t, indexed: undefined };
  const one = (list: readonly string[]) =>
    list.length === 1 ? `${alias}.type = ${literal(list[0])}` : `${alias}.type IN (${literals(list)})`;
  return indexed ? `${one(indexed)} AND ${one(types)}` : one(types);
};

/**
 * A condition true when the stream named by `streamIdSql` (an SQL expression of the statement it
 * goes into) has an event of `match` (with `field` = `equals` in its data, when given): for a
 * statement that writes elsewhere (the usage ledger, the fold snapshots) and asks the log.
 */
export const streamHasEventSql = (
  streamIdSql: string,
  match: TypeMatch & { field?: string; equals?: string },
  alias = 'x',
): string =>
  `EXISTS (SELECT 1 FROM events ${alias}
            WHERE ${alias}.stream_id = ${streamIdSql} AND ${typeIs(alias, match)}${
              match.field && match.equals !== undefined
                ? ` AND ${alias}.data ->> ${literal(match.field)} = ${literal(match.equals)}`
                : ''
            })`;

/** An event of the log as these questions return it. */
export interface LoggedEvent<D = Record<string, unknown>> {
  eventId: string;
  streamId: string;
  type: string;
  version: number;
  data: D;
}

/**
 * Questions asked of the event log by SQL, for the packages that know what the events mean
 * (read models, erasure, webhooks): the event store is the one package that reads `events` by SQL.
 * Each question is named for its shape; the event types and data fields it is about are its
 * parameters (see `literal`), the values bound.
 */
@Injectable()
export class EventLogQueries {
  constructor(@Inject(Pool) private readonly db: Pick<Pool, 'query'>) {}

  /** The streams with an event of `type` whose data's `field` is `value`. */
  async streamsWith(type: string, field: string, value: string): Promise<string[]> {
    const { rows } = await this.db.query<{ stream_id: string }>(
      `SELECT stream_id FROM events WHERE type = ${literal(type)} AND data ->> ${literal(field)} = $1`,
      [value],
    );
    return rows.map((r) => r.stream_id);
  }

  /**
   * The streams started (`start`: its type, and the data field that must be `startedBy`) whose
   * events name `value`: in the array `inArray.field` of an event of `inArray.types`, or as
   * `inField.field` of an event of `inField.type`.
   */
  async streamsNaming(
    value: string,
    names: { inArray: { types: readonly string[]; field: string }; inField: { type: string; field: string } },
    start: { type: string; field: string; startedBy: string },
  ): Promise<string[]> {
    const { rows } = await this.db.query<{ stream_id: string }>(
      `SELECT DISTINCT s.stream_id FROM events s
        WHERE ((${typeIs('s', names.inArray.types)} AND s.data -> ${literal(names.inArray.field)} ? $1)
               OR (${typeIs('s', [names.inField.type])} AND s.data ->> ${literal(names.inField.field)} = $1))
          AND EXISTS (SELECT 1 FROM events o
                       WHERE o.stream_id = s.stream_id AND ${typeIs('o', [start.type])} AND o.data ->> ${literal(start.field)} = $2)`,
      [value, start.startedBy],
    );
    return rows.map((r) => r.stream_id);
  }

  /**
   * The events of the given types whose array (a field of their data, by type) holds an element
   * whose `key` is one of `values`. A scan of those types, for a rare request.
   */
  async eventsWithArrayElement(
    arrays: Array<{ type: string; field: string }>,
    key: string,
    values: string[],
  ): Promise<LoggedEvent[]> {
    if (values.length === 0 || arrays.length === 0) return [];
    const byType = arrays
      .map((a) => `WHEN ${literal(a.type)} THEN coalesce(e.data -> ${literal(a.field)}, '[]')`)
      .join(' ');
    const { rows } = await this.db.query<EventRow>(
      `SELECT e.event_id, e.stream_id, e.type, e.version, ${eventDataSql('e')} AS data FROM events e
        WHERE ${typeIs(
          'e',
          arrays.map((a) => a.type),
        )}
          AND EXISTS (SELECT 1 FROM jsonb_array_elements(CASE e.type ${byType} END) c
                       WHERE c ->> ${literal(key)} = ANY($1::text[]))`,
      [values],
    );
    return rows.map(loggedEvent);
  }

  /** The first `limit` streams, in log order, with an event of `type`. */
  async streamsWithType(type: string, limit: number): Promise<string[]> {
    const { rows } = await this.db.query<{ stream_id: string }>(
      `SELECT stream_id FROM events WHERE type = ${literal(type)} ORDER BY position LIMIT $1`,
      [limit],
    );
    return rows.map((r) => r.stream_id);
  }

  /**
   * Events of `type` written within `lookback` (a Postgres interval) that no event of `answeredBy`
   * in their stream answers (the same data `key`), in streams without an event of `unlessStreamHas`;
   * in log order, each with its key.
   */
  async unanswered(q: {
    type: string;
    key: string;
    answeredBy: readonly string[];
    unlessStreamHas: string;
    lookback: string;
  }): Promise<Array<{ streamId: string; key: string }>> {
    const key = literal(q.key);
    const { rows } = await this.db.query<{ stream_id: string; key: string }>(
      `SELECT p.stream_id, p.data->>${key} AS key
         FROM events p
        WHERE ${typeIs('p', [q.type])} AND p.occurred_at > now() - $1::interval
          AND NOT EXISTS (SELECT 1 FROM events e
                           WHERE e.stream_id = p.stream_id AND e.data->>${key} = p.data->>${key}
                             AND ${typeIs('e', q.answeredBy)})
          AND NOT EXISTS (SELECT 1 FROM events d WHERE d.stream_id = p.stream_id AND ${typeIs('d', [q.unlessStreamHas])})
        ORDER BY p.position`,
      [q.lookback],
    );
    return rows.map((r) => ({ streamId: r.stream_id, key: r.key }));
  }

  /** The events of `types` whose stream and data `key` are one of `pairs`, by stream and version. */
  async eventsByKey<D = Record<string, unknown>>(
    types: readonly string[],
    key: string,
    pairs: Array<{ streamId: string; key: string }>,
  ): Promise<Array<LoggedEvent<D>>> {
    if (pairs.length === 0) return [];
    const { rows } = await this.db.query<EventRow<D>>(
      `SELECT e.event_id, e.stream_id, e.type, e.version, ${eventDataSql('e')} AS data FROM events e
         JOIN (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS t(stream_id, key)) t
           ON e.stream_id = t.stream_id AND e.data->>${literal(key)} = t.key
        WHERE ${typeIs('e', types)}
        ORDER BY e.stream_id, e.version`,
      [pairs.map((p) => p.streamId), pairs.map((p) => p.key)],
    );
    return rows.map(loggedEvent);
  }

  /** The event of that id in that stream, with its place and metadata; undefined when there is none. */
  async event(
    streamId: string,
    eventId: string,
  ): Promise<{ data: unknown; version: number; position: string; metadata: Record<string, unknown> } | undefined> {
    const { rows } = await this.db.query<{
      data: unknown;
      version: number;
      position: string;
      metadata: Record<string, unknown>;
    }>(
      `SELECT ${eventDataSql()} AS data, version, position::text AS position, metadata FROM events WHERE event_id = $1 AND stream_id = $2`,
      [eventId, streamId],
    );
    return rows[0];
  }

  /** Of these streams, the ones with an event of `match`. */
  async streamsHaving(streamIds: string[], match: TypeMatch): Promise<Set<string>> {
    const { rows } = await this.db.query<{ stream_id: string }>(
      `SELECT DISTINCT stream_id FROM events x WHERE stream_id = ANY($1::text[]) AND ${typeIs('x', match)}`,
      [streamIds],
    );
    return new Set(rows.map((r) => r.stream_id));
  }

  /**
   * Streams derived from others (their `derived.type` event names the origin in the data path
   * `derived.path`, as the origin's stream id without `derived.prefix`) whose origin has an event
   * of `origin.match` with its data's `origin.field` one of `origin.values` (in `origin.streams`
   * and within `origin.lookback`, when given), and which have no such event themselves. Each with
   * its derived event's `derived.field` and the origin event's `origin.field`.
   */
  async derivedFromMarked(q: {
    origin: { match: TypeMatch; field: string; values: readonly string[] };
    derived: { type: string; path: [string, string]; prefix: string; field: string };
    streams: string[] | null;
    lookback: string | null;
  }): Promise<Array<{ streamId: string; derivedField: string; originField: string }>> {
    const { origin, derived } = q;
    const { rows } = await this.db.query<{ stream_id: string; derived_field: string; origin_field: string }>(
      `SELECT f.stream_id, f.data ->> ${literal(derived.field)} AS derived_field, t.data ->> ${literal(origin.field)} AS origin_field
         FROM events t
         JOIN events f ON ${typeIs('f', [derived.type])}
                      AND f.data -> ${literal(derived.path[0])} ->> ${literal(derived.path[1])} = substr(t.stream_id, length(${literal(derived.prefix)}) + 1)
        WHERE ${typeIs('t', origin.match)}
          AND t.data ->> ${literal(origin.field)} IN (${literals(origin.values)})
          AND ($1::text[] IS NULL OR t.stream_id = ANY($1))
          AND ($2::interval IS NULL OR t.occurred_at > now() - $2::interval)
          AND NOT EXISTS (SELECT 1 FROM events g
                           WHERE g.stream_id = f.stream_id AND ${typeIs('g', origin.match)})`,
      [q.streams, q.lookback],
    );
    return rows.map((r) => ({ streamId: r.stream_id, derivedField: r.derived_field, originField: r.origin_field }));
  }
}

interface EventRow<D = Record<string, unknown>> {
  event_id: string;
  stream_id: string;
  type: string;
  version: number;
  data: D;
}

const loggedEvent = <D>(r: EventRow<D>): LoggedEvent<D> => ({
  eventId: r.event_id,
  streamId: r.stream_id,
  type: r.type,
  version: r.version,
  data: r.data,
});
