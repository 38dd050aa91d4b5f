import { StoredEvent } from './event.types';

/** The channel appends are announced on; the payload is an Announcement. */
export const EVENTS_CHANNEL = 'parley_events';

/**
 * What an append announces on EVENTS_CHANNEL: `<stream id>\n<the stream's version after it>`, and
 * for an append from the pool (announced in its own statement) `\n<the events it stored as
 * JSON>` too, so a listener that serves them (an SSE channel, a kept fold) takes them from the
 * notification instead of reading them back. Events that would not fit a notification (Postgres'
 * payload limit is 8000 bytes) are left out. The version tells a listener whether it already has
 * what was appended. An append inside a caller's transaction announces the stream id and version
 * only, and an older release the stream id alone: "read me".
 */
export interface Announcement {
  streamId: string;
  /** the stream's version after the append, when the announcement says it */
  version?: number;
  /** the events as stored, oldest first, when the announcement carries them */
  events?: StoredEvent[];
}

/** The payload of an announcement that carries no events. */
export const announcementOf = (streamId: string, version: number): string => `${streamId}\n${version}`;

/** A stored event as the announcement carries it (the columns of event-rows' EVENT_COLUMNS). */
interface AnnouncedEvent {
  position: string;
  event_id: string;
  version: number;
  type: string;
  data: unknown;
  metadata: StoredEvent['metadata'];
  transaction_id: string;
  /** milliseconds since the epoch, cut as pg cuts a timestamptz to a Date */
  occurred_at: number;
}

/** Postgres refuses a NOTIFY payload of 8000 bytes or more. */
const PAYLOAD_LIMIT_BYTES = 8000;

/**
 * A CTE for an append statement, after its `inserted` CTE: one announcement per stream inserted
 * to, with its inserted events, or without them when too long.
 */
export function announcedStreamsCte(channel: string): string {
  return `, announced AS (
    SELECT pg_notify('${channel}', CASE WHEN octet_length(head) + octet_length(events) < ${PAYLOAD_LIMIT_BYTES} - 1
                                        THEN head || chr(10) || events ELSE head END)
      FROM (SELECT stream_id || chr(10) || max(version) AS head, json_agg(json_build_object(
                'position', position::text, 'event_id', event_id, 'version', version, 'type', type,
                'data', data, 'metadata', metadata, 'transaction_id', transaction_id_text,
                'occurred_at', floor(extract(epoch FROM occurred_at) * 1000)
              ) ORDER BY version)::text AS events
              FROM inserted GROUP BY stream_id) AS announcement
  )`;
}

/** An announcement's payload read back. */
export function parseAnnouncement(payload: string): Announcement {
  const [streamId, version, json] = splitTwice(payload, '\n');
  if (version === undefined) return { streamId };
  if (json === undefined) return { streamId, version: Number(version) };
  let events: StoredEvent[] | undefined;
  // parsed only for a listener that asks for the events: most hear of streams they do not serve
  return {
    streamId,
    version: Number(version),
    get events() {
      events ??= (JSON.parse(json) as AnnouncedEvent[]).map((e) => ({
        id: e.event_id,
        streamId,
        version: e.version,
        position: e.position,
        transactionId: e.transaction_id,
        type: e.type,
        data: e.data,
        metadata: e.metadata ?? {},
        occurredAt: new Date(e.occurred_at),
      }));
      return events;
    },
  };
}

/** The text before the first separator, between it and the second, and the rest (JSON may hold the separator). */
function splitTwice(text: string, separator: string): [string, string?, string?] {
  const first = text.indexOf(separator);
  if (first < 0) return [text];
  const second = text.indexOf(separator, first + 1);
  if (second < 0) return [text.slice(0, first), text.slice(first + 1)];
  return [text.slice(0, first), text.slice(first + 1, second), text.slice(second + 1)];
}
