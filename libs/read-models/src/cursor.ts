import { isUuid } from '@parley/platform';

/** Opaque page cursors: base64url JSON, checked on the way back in. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export class InvalidCursorError extends Error {
  constructor() {
    super('cursor is not valid');
  }
}

export function decodeCursor<T>(cursor: string, isValid: (v: unknown) => v is T): T {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  if (!isValid(value)) throw new InvalidCursorError();
  return value;
}

/** An instant as the keys of page cursors spell it (to_char …'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'): UTC, microseconds, years 0001..9999. */
const INSTANT_KEY = /^(?!0000)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * Whether a cursor's instant is one such key, and a real one: no 30 February or hour 24, which
 * Date would roll over, and no year Postgres' timestamptz cannot hold (Date.parse takes ±275760).
 */
export function isInstantKey(s: string): boolean {
  if (!INSTANT_KEY.test(s)) return false;
  const millis = s.slice(0, 23);
  const d = new Date(`${millis}Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 23) === millis;
}

/** A page cursor of rows ordered by an instant and an id: [instant key, uuid]. */
export type InstantIdCursor = [string, string];

export const isInstantIdCursor = (v: unknown): v is InstantIdCursor =>
  Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && isInstantKey(v[0]) && isUuid(v[1]);
