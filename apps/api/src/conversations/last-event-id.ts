import { invalid } from '../http/problem.exception';

/** The pattern the OpenAPI document states; versions above 2³¹−1 are refused as well. */
export const LAST_EVENT_ID_PATTERN = '^\\d{1,10}$';
const LAST_EVENT_ID = new RegExp(LAST_EVENT_ID_PATTERN);

/** `Last-Event-ID: 7` (the last version a client received) → 7; absent → undefined; anything else → 400. */
export function parseLastEventId(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !LAST_EVENT_ID.test(header) || Number(header) > 2 ** 31 - 1) {
    throw invalid('Last-Event-ID', 'Last-Event-ID must be a stream version');
  }
  return Number(header);
}
