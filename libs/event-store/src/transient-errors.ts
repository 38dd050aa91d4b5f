/**
 * Errors that say "the database is away or busy, try again", as opposed to "this statement or
 * this event is wrong". Writers retry the first kind with backoff and keep what they were about
 * to write; only the second kind may fail a request or dead-letter an event.
 */
const TRANSIENT_SQLSTATE_CLASSES = ['08', '53', '57']; // connection, insufficient resources, operator intervention
const TRANSIENT_SQLSTATES = new Set(['40001', '40P01', '55P03']); // serialization, deadlock, lock not available
const TRANSIENT_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN']);
const TRANSIENT_MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

export function isTransientDbError(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown; errors?: unknown[] } | undefined;
  if (!err) return false;
  const code = typeof err.code === 'string' ? err.code : '';
  if (TRANSIENT_NODE_CODES.has(code) || TRANSIENT_SQLSTATES.has(code)) return true;
  if (/^[0-9A-Z]{5}$/.test(code) && TRANSIENT_SQLSTATE_CLASSES.includes(code.slice(0, 2))) return true;
  if (Array.isArray(err.errors) && err.errors.some(isTransientDbError)) return true; // AggregateError (IPv4 + IPv6)
  const message = typeof err.message === 'string' ? err.message : '';
  return TRANSIENT_MESSAGES.some((re) => re.test(message));
}

/** Exponential backoff with jitter: 100 ms, 200 ms, … up to `maxMs`. */
export function backoffMs(attempt: number, maxMs = 5_000): number {
  const base = Math.min(maxMs, 100 * 2 ** Math.min(attempt, 16));
  return Math.round(base / 2 + (Math.random() * base) / 2);
}
