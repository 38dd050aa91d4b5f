/**
 * The Message Batches API of the fake: create a batch of Messages requests, look at it until it
 * has ended, then read its results as JSONL (one line per request, in any order), with the
 * shapes and the checks of the real API. Each request is answered when its batch ends, by the
 * same script and default responder as POST /v1/messages, and validated then too: a request the
 * Messages API would reject ends `errored` with that 400's message, as the real API does.
 */
import { newId } from './render-reply';

export const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_REQUESTS = 100_000;
const EXPIRES_AFTER_MS = 24 * 3600 * 1000;

export type BatchResult =
  | { type: 'succeeded'; message: unknown }
  | { type: 'errored'; error: { type: 'error'; error: { type: string; message: string } } }
  | { type: 'canceled' }
  | { type: 'expired' };

export interface FakeBatch {
  id: string;
  createdAt: number;
  endedAt?: number;
  requests: Array<{ custom_id: string; params: any }>;
  results?: Array<{ custom_id: string; result: BatchResult }>;
}

/** The request body's problem, with the real API's 400 message, or null. */
export function batchCreateViolation(body: any): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return 'body: Input should be a valid dictionary';
  for (const key of Object.keys(body)) if (key !== 'requests') return `${key}: Extra inputs are not permitted`;
  if (body.requests === undefined) return 'requests: Field required';
  if (!Array.isArray(body.requests)) return 'requests: Input should be a valid list';
  if (body.requests.length === 0) return 'requests: List should have at least 1 item after validation, not 0';
  if (body.requests.length > MAX_REQUESTS)
    return `requests: List should have at most ${MAX_REQUESTS} items after validation, not ${body.requests.length}`;
  const seen = new Set<string>();
  for (const [i, r] of body.requests.entries()) {
    if (typeof r !== 'object' || r === null) return `requests.${i}: Input should be a valid dictionary`;
    if (typeof r.custom_id !== 'string' || !CUSTOM_ID.test(r.custom_id))
      return `requests.${i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`;
    if (seen.has(r.custom_id)) return `Duplicate custom_id: ${r.custom_id}. Each custom_id must be unique.`;
    seen.add(r.custom_id);
    if (typeof r.params !== 'object' || r.params === null) return `requests.${i}.params: Field required`;
    if ('stream' in r.params) return `requests.${i}.params.stream: Extra inputs are not permitted`;
  }
  return null;
}

export function newBatch(requests: FakeBatch['requests']): FakeBatch {
  return { id: newId('msgbatch_'), createdAt: Date.now(), requests };
}

/** The MessageBatch object as the API returns it. */
export function batchJson(b: FakeBatch, baseUrl: string) {
  const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
  if (!b.results) counts.processing = b.requests.length;
  else for (const r of b.results) counts[r.result.type]++;
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return {
    id: b.id,
    type: 'message_batch',
    processing_status: b.results ? 'ended' : 'in_progress',
    request_counts: counts,
    ended_at: iso(b.endedAt),
    created_at: iso(b.createdAt),
    expires_at: iso(b.createdAt + EXPIRES_AFTER_MS),
    archived_at: null,
    cancel_initiated_at: null,
    results_url: b.results ? `${baseUrl}/v1/messages/batches/${b.id}/results` : null,
  };
}

/** The results file: one JSON object per line. */
export function resultsJsonl(b: FakeBatch): string {
  return (b.results ?? []).map((r) => JSON.stringify(r)).join('\n') + '\n';
}
