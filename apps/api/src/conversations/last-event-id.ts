import { invalid } from '../http/problem.exception';

/** `Last-Event-ID: 7` (the last version a client received) → 7; absent → undefined; anything else → 400. */
export function parseLastEventId(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !/^\d{1,10}$/.test(header) || Number(header) > 2 ** 31 - 1) {
    throw invalid('Last-Event-ID', 'Last-Event-ID must be a stream version');
  }
  return Number(header);
}
