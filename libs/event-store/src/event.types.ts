/** An event as a writer hands it to the store. */
export interface NewEvent<T extends string = string, D = unknown> {
  id: string;
  type: T;
  data: D;
  metadata?: EventMetadata;
}

export interface EventMetadata {
  userId?: string;
  correlationId?: string;
  causationId?: string;
  [key: string]: unknown;
}

/** An event as stored: its place in the stream (version) and in the log (position). */
export interface StoredEvent<T extends string = string, D = unknown> {
  id: string;
  streamId: string;
  version: number;
  /** bigint as a decimal string, as pg returns it and the API serves it (docs/events.md) */
  position: string;
  /** the writing transaction (xid8) as a decimal string */
  transactionId: string;
  type: T;
  data: D;
  metadata: EventMetadata;
  occurredAt: Date;
}

/** Expected version: the stream's current version, 'no_stream' (must not exist yet) or 'any'. */
export type ExpectedVersion = number | 'no_stream' | 'any';

export interface AppendResult {
  /** the stream's version after the append: pass it as expectedVersion next time */
  nextExpectedVersion: number;
  events: StoredEvent[];
}

/** Where a reader of the global log stands: the pair, never the position alone. */
export interface LogCheckpoint {
  transactionId: string;
  position: string;
}

export const LOG_START: LogCheckpoint = { transactionId: '0', position: '0' };

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
