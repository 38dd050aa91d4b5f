import { unescape } from 'node:querystring';

export const REDACTED = '[REDACTED]';

/** A bearer token sent as ?access_token= (EventSource cannot set headers); `access_token[]` too. */
const isTokenParam = (rawName: string): boolean => /^access_token(\[|$)/.test(unescape(rawName.replace(/\+/g, ' ')));

/**
 * The URL with the value of every access_token query parameter replaced, however its name is
 * percent-encoded (the query parser decodes `access%5Ftoken` to access_token, so the guard takes it).
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  return `${url.slice(0, q + 1)}${redactQueryString(url.slice(q + 1))}`;
}

/** A query string (without its `?`) with the value of every access_token parameter replaced, as redactUrl. */
export function redactQueryString(query: string): string {
  return query
    .split('&')
    .map((param) => {
      const name = param.split('=', 1)[0];
      return isTokenParam(name) ? `${name}=${REDACTED}` : param;
    })
    .join('&');
}

/** A parsed query without its access_token parameters' values. */
export function redactQuery(query: unknown): unknown {
  if (!query || typeof query !== 'object') return query;
  return Object.fromEntries(Object.entries(query).map(([k, v]) => [k, isTokenParam(k) ? REDACTED : v]));
}
