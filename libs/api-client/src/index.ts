/**
 * Parley's typed HTTP client, generated from docs/openapi.json (`npm run openapi`): the paths,
 * bodies and answers are the document's, so a change of the API that the document does not
 * state fails to compile here and in every client built on it (the CLI, the web page, the tests).
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';

export type { components, paths };
export type ParleyClient = Client<paths>;
export type Schemas = components['schemas'];

export interface ParleyClientOptions {
  /** the API's origin, e.g. http://127.0.0.1:3000 (paths carry their /v1 prefix) */
  baseUrl: string;
  /** a bearer token; a function is asked before each request (a token that is renewed) */
  token?: string | (() => string | undefined);
  fetch?: typeof globalThis.fetch;
}

export function createParleyClient(options: ParleyClientOptions): ParleyClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: options.fetch });
  const auth: Middleware = {
    onRequest({ request }) {
      const token = typeof options.token === 'function' ? options.token() : options.token;
      if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
  };
  client.use(auth);
  return client;
}

/**
 * RFC 9457 problem details `{type, title, status, detail, code}`; the NestJS shape
 * `{statusCode, error, message}` (message a string or a list) is read too.
 */
export function readProblem(body: unknown): { detail?: string; code?: string } {
  if (typeof body === 'string') return { detail: body.trim().slice(0, 300) || undefined };
  if (!body || typeof body !== 'object') return {};
  const b = body as Record<string, unknown>;
  const text = (v: unknown): string | undefined =>
    typeof v === 'string' && v.trim() ? v : Array.isArray(v) && v.length ? v.map(String).join('; ') : undefined;
  return {
    detail: text(b.detail) ?? text(b.message) ?? text(b.title) ?? text(b.error),
    code: typeof b.code === 'string' ? b.code : undefined,
  };
}

/** The fields of a `budget_exceeded` problem (402): the reader's monthly budget is spent until `resetsAt`. */
export interface BudgetExceeded {
  budgetUsd: number;
  spentUsd: number;
  /** ISO 8601: the start of next month (UTC) */
  resetsAt: string;
}

/** The budget_exceeded problem a body holds, or undefined for any other answer. */
export function readBudgetExceeded(body: unknown): BudgetExceeded | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const b = body as Record<string, unknown>;
  if (b.code !== 'budget_exceeded' || typeof b.resetsAt !== 'string') return undefined;
  return { budgetUsd: Number(b.budgetUsd), spentUsd: Number(b.spentUsd), resetsAt: b.resetsAt };
}

/** Dollars as a reader reads them: cents from $1, else enough digits to tell small sums apart. */
export const formatUsd = (usd: number): string => (usd === 0 ? '$0' : `$${usd >= 1 ? usd.toFixed(2) : usd.toFixed(4)}`);

/** Every stored event type, in the order docs/events.md lists them (the union's members). */
export { CONVERSATION_EVENT_TYPES } from '../../conversation/src/events';
/** The live `event: AssistantTextDelta` SSE frame (docs/events.md), which the document cannot type. */
export type { AssistantTextDelta } from '../../conversation/src/events';
