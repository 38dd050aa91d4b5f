/**
 * Helpers for the typed client (`Client['api']`, generated from docs/openapi.json): a call answers
 * `{ data, error, response }`; these turn that into the body a test expects, or fail saying what
 * the API answered instead.
 */
import type { Schemas } from '../../libs/api-client/src';

/** What an openapi-fetch call resolves to (success and error halves of its union). */
export interface ApiResult<D, E> {
  data?: D;
  error?: E;
  response: Response;
}

function describeAnswer(r: ApiResult<unknown, unknown>): string {
  const e = r.error as { code?: string; detail?: string } | string | undefined;
  const what = typeof e === 'object' && e ? `${e.code ?? '?'}: ${e.detail ?? JSON.stringify(e)}` : String(e ?? '');
  return `${r.response.url} answered ${r.response.status} ${what}`.trim();
}

/**
 * The body of a successful call (typed by the operation's success response); throws with the
 * problem's code and detail when the call failed, or when `status` is given and differs.
 */
export function expectOk<D, E>(r: ApiResult<D, E>, status?: number): D {
  if (r.error !== undefined || !r.response.ok || (status !== undefined && r.response.status !== status)) {
    throw new Error(`expected ${status ?? '2xx'}: ${describeAnswer(r)}`);
  }
  return r.data as D;
}

/**
 * The problem of a failed call (typed by the operation's documented problems); throws when the call
 * succeeded, or when the status differs from `status`.
 */
export function expectProblem<D, E>(r: ApiResult<D, E>, status: number): NonNullable<E> {
  if (r.response.status !== status || r.error === undefined) {
    throw new Error(`expected a ${status} problem: ${describeAnswer(r)} ${JSON.stringify(r.data ?? '')}`);
  }
  return r.error as NonNullable<E>;
}

/** A stored event as GET /v1/conversations/{id}/events answers it (the document's union). */
export type Envelope = Schemas['ConversationEventEnvelope'];
/** The envelope of one event type, its `data` typed. */
export type EventOf<T extends Envelope['type']> = Extract<Envelope, { type: T }>;
/** A type guard for `filter`/`find`: `evs.find(isEvent('AssistantReplied'))` is typed. */
export const isEvent =
  <T extends Envelope['type']>(...types: T[]) =>
  (e: Envelope): e is EventOf<T> =>
    (types as string[]).includes(e.type);
/** The turn an event belongs to (undefined for ConversationStarted, ConversationRenamed, ...). */
export const turnOf = (e: Envelope): string | undefined =>
  typeof (e.data as { turnId?: unknown }).turnId === 'string' ? (e.data as { turnId: string }).turnId : undefined;
/** Fails unless `e` is an event of `type`; returns it typed. */
export function expectEvent<T extends Envelope['type']>(e: Envelope | undefined, type: T): EventOf<T> {
  if (e?.type !== type) throw new Error(`expected a ${type} event, got ${JSON.stringify(e)}`);
  return e as EventOf<T>;
}
