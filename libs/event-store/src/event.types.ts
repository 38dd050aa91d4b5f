/**
 * What every event contract is made of: a stored type name and its data. A stream's contract is a
 * union of these, tagged by `type` (e.g. ConversationEvent), and the store's types carry it: a
 * writer can only hand over events of the union, and a reader gets the union back, so folds need
 * no cast. The store does not check stored rows against it (a newer build may have written types
 * this one does not know: folds must ignore those, as `evolve` does).
 */
export interface EventShape {
  type: string;
  data: unknown;
}

/** An event as a writer hands it to the store. For a union E, a union of envelopes (narrowable). */
export type NewEvent<E extends EventShape = EventShape> = E & {
  id: string;
  metadata?: EventMetadata;
};

export interface EventMetadata {
  userId?: string;
  correlationId?: string;
  causationId?: string;
  [key: string]: unknown;
}

/** An event as stored: its place in the stream (version) and in the log (position). */
export type StoredEvent<E extends EventShape = EventShape> = E & StoredEnvelope;

export interface StoredEnvelope {
  id: string;
  streamId: string;
  version: number;
  /** bigint as a decimal string, as pg returns it and the API serves it (docs/events.md) */
  position: string;
  /** the writing transaction (xid8) as a decimal string */
  transactionId: string;
  metadata: EventMetadata;
  occurredAt: Date;
}

/** The contract part of a stored event (`type` and `data`), to write it again elsewhere (a fork). */
export function eventOf<E extends EventShape>(stored: StoredEvent<E>): E {
  return { type: stored.type, data: stored.data } as E;
}

/** Expected version: the stream's current version, 'no_stream' (must not exist yet) or 'any'. */
export type ExpectedVersion = number | 'no_stream' | 'any';

export interface AppendResult<E extends EventShape = EventShape> {
  /** the stream's version after the append: pass it as expectedVersion next time */
  nextExpectedVersion: number;
  events: StoredEvent<E>[];
}

/** Where a reader of the global log stands: the pair, never the position alone. */
export interface LogCheckpoint {
  transactionId: string;
  position: string;
}

export const LOG_START: LogCheckpoint = { transactionId: '0', position: '0' };

/** A read of the log's tail: its next events, and whether committed events wait behind an open transaction. */
export interface LogTail {
  events: StoredEvent[];
  heldBack: boolean;
}

export class WrongExpectedVersionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedVersion,
    readonly actual: number,
  ) {
    super(`stream ${streamId} is at version ${actual}, expected ${String(expected)}`);
    this.name = 'WrongExpectedVersionError';
  }
}

export class DuplicateEventIdError extends Error {
  constructor(readonly eventIds: string[]) {
    super(`event ids already stored elsewhere: ${eventIds.join(', ')}`);
    this.name = 'DuplicateEventIdError';
  }
}
