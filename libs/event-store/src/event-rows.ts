import { EventShape, StoredEvent } from './event.types';

export interface EventRow {
  position: string;
  event_id: string;
  stream_id: string;
  version: number;
  type: string;
  data: unknown;
  metadata: StoredEvent['metadata'];
  /** xid8 as text, under a name of its own: an alias named transaction_id would shadow the
   * column in ORDER BY and sort the log as text ('1000' < '999') */
  transaction_id_text: string;
  occurred_at: Date;
}

/**
 * An event row as readers see it. The data of the two types that may cite a book goes through
 * parley_event_data (migration 033): their passages are stored by reference and joined here, so
 * every read of the log (folds, tails, the API's and SSE's) serves the text, or the withdrawal
 * notice once the passage is gone.
 */
export const EVENT_COLUMNS =
  'position, event_id, stream_id, version, type, ' +
  `${eventDataSql()} AS data, ` +
  'metadata, transaction_id::text AS transaction_id_text, occurred_at';

/** An event's data as readers see it, in SQL (`alias`: the events table's, if the query names one). */
export function eventDataSql(alias?: string): string {
  const [type, data] = alias ? [`${alias}.type`, `${alias}.data`] : ['type', 'data'];
  return `CASE WHEN ${type} IN ('ToolResultRecorded', 'AssistantReplied') THEN parley_event_data(${type}, ${data}) ELSE ${data} END`;
}

/**
 * A row as an event of contract E: the one place the log's untyped rows become a contract's
 * events (the writers of a stream appended only E; see EventShape).
 */
export function toStoredEvent<E extends EventShape = EventShape>(row: EventRow): StoredEvent<E> {
  const stored: StoredEvent = {
    id: row.event_id,
    streamId: row.stream_id,
    version: row.version,
    position: String(row.position),
    transactionId: row.transaction_id_text,
    type: row.type,
    data: row.data,
    metadata: row.metadata ?? {},
    occurredAt: row.occurred_at,
  };
  return stored as StoredEvent<E>;
}
