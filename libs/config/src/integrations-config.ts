import { Env } from './env';

/** Which browser origins may call the API (docs/cors.md). */
export interface CorsConfig {
  /** exact origins, or `*` among them for any; empty: CORS is off */
  origins: string[];
}

/** How webhooks are delivered (docs/webhooks.md). */
export interface WebhooksConfig {
  /** endpoints may be (and resolve to) loopback, link-local or private addresses */
  allowPrivateUrls: boolean;
  /** tries of one delivery before it is given up and its endpoint disabled */
  maxAttempts: number;
  /** the pause after the first failed try, doubled after each next one up to retryMaxMs */
  retryBaseMs: number;
  retryMaxMs: number;
  /** the deadline of one try, its lookup, connection, answer and body together */
  timeoutMs: number;
  /** deliveries in flight at once (across workers) to one endpoint, and to one reader's endpoints */
  inFlightPerEndpoint: number;
  inFlightPerReader: number;
}

export function corsConfig(e: Env): CorsConfig {
  return { origins: e.CORS_ORIGINS ?? [] };
}

export function webhooksConfig(e: Env): WebhooksConfig {
  return {
    allowPrivateUrls: e.WEBHOOKS_ALLOW_PRIVATE_URLS,
    maxAttempts: e.WEBHOOKS_MAX_ATTEMPTS,
    retryBaseMs: e.WEBHOOKS_RETRY_BASE_MS,
    retryMaxMs: Math.max(e.WEBHOOKS_RETRY_MAX_MS, e.WEBHOOKS_RETRY_BASE_MS),
    timeoutMs: e.WEBHOOKS_TIMEOUT_MS,
    inFlightPerEndpoint: e.WEBHOOKS_IN_FLIGHT_PER_ENDPOINT,
    inFlightPerReader: e.WEBHOOKS_IN_FLIGHT_PER_READER,
  };
}
