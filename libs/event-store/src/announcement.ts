import { StoredEvent } from './event.types';

/**
 * What an append announces on EVENTS_CHANNEL: the stream id, a newline and the events it stored
 * as JSON, so a listener that serves them (an SSE channel, a kept fold) takes them from the
 * notification instead of reading them back. Events that would not fit a notification (Postgres'
 * payload limit is 8000 bytes) are left out, as are those of an append inside a caller's
 * transaction: the stream id alone says "read me".
 */
export interface Announcement {
  streamId: string;
  /** the events as stored, oldest first, when the announcement carries them */
  events?: StoredEvent[];
}

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
 * CTEs for the append statement, after its `inserted` CTE, whose first parameter ($1) is the
 * stream id: the announcement with the inserted events, or the stream id alone when too long.
 */
export function announcementCtes(channel: string): string {
  return `, announcement AS (
    SELECT $1::text || chr(10) || json_agg(json_build_object(
        'position', position::text, 'event_id', event_id, 'version', version, 'type', type,
        'data', data, 'metadata', metadata, 'transaction_id', transaction_id_text,
        'occurred_at', floor(extract(epoch FROM occurred_at) * 1000)
      ) ORDER BY version)::text AS payload
      FROM inserted HAVING count(*) > 0
  ), announced AS (
    SELECT pg_notify('${channel}', CASE WHEN octet_length(payload) < ${PAYLOAD_LIMIT_BYTES} THEN payload ELSE $1 END)
      FROM announcement
  )`;
}

/** The payload announcing `events` of one append, made in this process (the coalesced announcements). */
export function announcementPayload(streamId: string, events: StoredEvent[]): string {
  const announced: AnnouncedEvent[] = events.map((e) => ({
    position: e.position,
    event_id: e.id,
    version: e.version,
    type: e.type,
    data: e.data,
    metadata: e.metadata,
    transaction_id: e.transactionId,
    occurred_at: e.occurredAt.getTime(),
  }));
  const payload = `${streamId}\n${JSON.stringify(announced)}`;
  return Buffer.byteLength(payload) < PAYLOAD_LIMIT_BYTES ? payload : streamId;
}

/** An announcement's payload read back; a payload of an older release is a stream id alone. */
export function parseAnnouncement(payload: string): Announcement {
  const newline = payload.indexOf('\n');
  if (newline < 0) return { streamId: payload };
  const streamId = payload.slice(0, newline);
  let events: StoredEvent[] | undefined;
  // parsed only for a listener that asks for the events: most hear of streams they do not serve
  return {
    streamId,
    get events() {
      events ??= (JSON.parse(payload.slice(newline + 1)) as AnnouncedEvent[]).map((e) => ({
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
