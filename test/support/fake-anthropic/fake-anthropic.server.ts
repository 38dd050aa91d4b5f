/**
 * A real HTTP server speaking the Anthropic Messages API (POST /v1/messages, JSON or SSE, and
 * the Message Batches API under /v1/messages/batches), so the official SDK, in this process or in a product process given ANTHROPIC_BASE_URL,
 * runs unchanged against scripted replies. It rejects requests the real API would reject.
 */
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultReply } from './default-responder';
import { citableDocuments } from './documents';
import {
  isFakeError,
  type FakeAnthropicOptions,
  type FakeError,
  type FakeReply,
  type FakeStep,
  type RecordedRequest,
  type RejectedRequest,
} from './fake-anthropic.types';
import {
  batchCreateViolation,
  batchJson,
  type BatchResult,
  type FakeBatch,
  newBatch,
  resultsJsonl,
} from './message-batches';
import { type CacheUsage, estimateTokens, PromptCache } from './prompt-cache';
import { newId, renderMessage, streamEvents } from './render-reply';
import { startSse, writeSse } from './sse-writer';
import { checkHeaders, CURRENT_VERSION, header, validateBody, type Violation } from './validate-request';
import { parseJson, readBody, sendJson } from '../http-body';

export * from './fake-anthropic.types';
export type { FakeBatch } from './message-batches';
export { PromptCache } from './prompt-cache';

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** An error step with the type the real API uses for `status`. */
export function apiError(status: number, message = `fake ${status}`): FakeError {
  return { error: { status, type: ERROR_TYPES[status] ?? 'api_error', message } };
}

export class FakeAnthropic {
  readonly requests: RecordedRequest[] = [];
  readonly rejected: RejectedRequest[] = [];
  /** Message Batches created, in order; a request of one is in `requests` once its batch ended */
  readonly batches: FakeBatch[] = [];
  private readonly script: FakeStep[] = [];
  private readonly cache: PromptCache;
  private readonly changes = new EventEmitter();
  private abortedCount = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly options: FakeAnthropicOptions,
  ) {
    this.cache = new PromptCache(options.minCacheableTokens);
  }

  static async start(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    const fake = new FakeAnthropic(server, `http://127.0.0.1:${port}`, options);
    server.on('request', (req, res) => {
      fake.handle(req, res).catch((err) => fake.crash(res, err));
    });
    return fake;
  }

  /** How many streamed replies the client abandoned midway. */
  get aborted(): number {
    return this.abortedCount;
  }

  /** Steps answer the next requests in order; the default responder answers once they run out. */
  enqueue(...steps: FakeStep[]): void {
    this.script.push(...steps);
  }

  reset(): void {
    this.script.length = 0;
    this.requests.length = 0;
    this.rejected.length = 0;
    this.abortedCount = 0;
    this.batches.length = 0;
    this.cache.clear();
  }

  /** Ends every batch still in progress now (with `holdBatches`, nothing else ends them). */
  endBatches(): void {
    for (const b of this.batches) if (!b.results) this.endBatch(b);
  }

  /** Resolves once `check()` holds, re-checked on every request; fails after `timeoutMs` naming `what`. */
  async waitFor(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
    if (check()) return;
    await new Promise<void>((resolve, reject) => {
      const onChange = () => {
        if (!check()) return;
        clearTimeout(timer);
        this.changes.off('change', onChange);
        resolve();
      };
      const timer = setTimeout(() => {
        this.changes.off('change', onChange);
        reject(new Error(`FakeAnthropic: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.changes.on('change', onChange);
    });
  }

  /** Stops listening and destroys open sockets, streams in flight included. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const recorded: RecordedRequest = { headers: req.headers, body: parseJson(rawBody), rawBody, at: Date.now() };
    const requestId = newId('req_');
    res.setHeader('request-id', requestId);
    if ((req.url ?? '').startsWith('/v1/messages/batches')) return this.handleBatches(req, res, recorded, requestId);

    const violation = this.violationOf(req, recorded);
    if (violation) {
      this.rejected.push({ req: recorded, status: violation.status, message: violation.message });
      this.changes.emit('change');
      return sendError(res, violation, requestId);
    }
    this.requests.push(recorded);
    this.changes.emit('change');

    const body = recorded.body;
    const answer = body.max_tokens === 0 ? cacheWarmup() : this.nextAnswer(recorded);
    if (isFakeError(answer)) return sendError(res, answer.error, requestId);
    const message = renderMessage(
      answer,
      body.model,
      (recorded.usage = this.inputUsage(recorded)),
      citableDocuments(body),
    );
    if (!body.stream) return sendJson(res, 200, message);

    const clientGone = new AbortController();
    res.on('close', () => {
      if (res.writableFinished) return;
      clientGone.abort();
      recorded.aborted = true;
      this.abortedCount++;
      this.changes.emit('change');
    });
    startSse(res);
    await writeSse(res, streamEvents(message), answer.delayMsPerChunk ?? 0, clientGone.signal, answer.breakOff);
  }

  /** POST /v1/messages/batches, GET /v1/messages/batches/{id}, GET /v1/messages/batches/{id}/results */
  private handleBatches(req: IncomingMessage, res: ServerResponse, recorded: RecordedRequest, requestId: string) {
    const headerViolation = checkHeaders(req.headers);
    if (headerViolation) return sendError(res, headerViolation, requestId);
    const path = (req.url ?? '').split('?')[0];
    const [, id, tail] = /^\/v1\/messages\/batches(?:\/([^/]+))?(?:\/(results))?$/.exec(path) ?? [];
    const notFound = () =>
      sendError(res, { status: 404, type: 'not_found_error', message: `Not found: ${req.method} ${path}` }, requestId);
    if (req.method === 'POST' && id === undefined) {
      const message =
        recorded.body === undefined
          ? 'There was an error parsing the body of your request: invalid JSON'
          : batchCreateViolation(recorded.body);
      if (message) return sendError(res, { status: 400, type: 'invalid_request_error', message }, requestId);
      const batch = newBatch(recorded.body.requests);
      this.batches.push(batch);
      if (!this.options.holdBatches) setTimeout(() => this.endBatch(batch), this.options.batchProcessingMs ?? 0);
      this.changes.emit('change');
      return sendJson(res, 200, batchJson(batch, this.url));
    }
    const batch = this.batches.find((b) => b.id === id);
    if (req.method !== 'GET' || !batch) return notFound();
    if (!tail) return sendJson(res, 200, batchJson(batch, this.url));
    if (!batch.results) {
      const message = `Batch ${batch.id} has not finished processing: its results are not available yet`;
      return sendError(res, { status: 400, type: 'invalid_request_error', message }, requestId);
    }
    res.writeHead(200, { 'content-type': 'application/binary' });
    res.end(resultsJsonl(batch));
  }

  /** Answers each request of the batch as POST /v1/messages would (non-streaming), then ends it. */
  private endBatch(batch: FakeBatch): void {
    if (batch.results) return;
    batch.results = batch.requests.map(({ custom_id, params }) => {
      const rawBody = JSON.stringify(params);
      const recorded: RecordedRequest = { headers: {}, body: params, rawBody, at: Date.now(), batchId: batch.id };
      const violation = validateBody(params);
      if (violation) {
        this.rejected.push({ req: recorded, status: 400, message: violation });
        return { custom_id, result: erroredResult('invalid_request_error', violation) };
      }
      this.requests.push(recorded);
      const answer = this.nextAnswer(recorded);
      if (isFakeError(answer)) return { custom_id, result: erroredResult(answer.error.type, answer.error.message) };
      const message = renderMessage(
        answer,
        params.model,
        (recorded.usage = this.inputUsage(recorded)),
        citableDocuments(params),
      );
      return { custom_id, result: { type: 'succeeded' as const, message } };
    });
    batch.endedAt = Date.now();
    this.changes.emit('change');
  }

  /** The request's input tokens: through the prompt-cache simulation, or all uncached with it off. */
  private inputUsage(recorded: RecordedRequest): CacheUsage {
    if (this.options.simulatePromptCache !== false) return this.cache.account(recorded.body);
    return {
      input_tokens: Math.max(1, estimateTokens(recorded.rawBody.length)),
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    };
  }

  private violationOf(req: IncomingMessage, recorded: RecordedRequest): Violation | null {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || path !== '/v1/messages') {
      return { status: 404, type: 'not_found_error', message: `Not found: ${req.method} ${path}` };
    }
    const headerViolation = checkHeaders(req.headers);
    if (headerViolation) return headerViolation;
    const message =
      recorded.body === undefined
        ? 'There was an error parsing the body of your request: invalid JSON'
        : validateBody(recorded.body, header(req.headers, 'anthropic-version') ?? CURRENT_VERSION);
    return message === null ? null : { status: 400, type: 'invalid_request_error', message };
  }

  private nextAnswer(req: RecordedRequest): FakeReply | FakeError {
    const step = this.script.shift();
    if (step === undefined) return (this.options.defaultResponder ?? defaultReply)(req);
    return typeof step === 'function' ? step(req) : step;
  }

  private crash(res: ServerResponse, err: unknown): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const message = `fake-anthropic failed: ${err instanceof Error ? err.message : String(err)}`;
    sendError(res, { status: 500, type: 'api_error', message }, String(res.getHeader('request-id') ?? ''));
  }
}

/** max_tokens 0 pre-warms the cache: no output, and no scripted step is spent on it. */
function cacheWarmup(): FakeReply {
  return { content: [], stopReason: 'max_tokens', usage: { output_tokens: 0 } };
}

/** A batch request's result when the Messages API would have answered with an error. */
function erroredResult(type: string, message: string): BatchResult {
  return { type: 'errored', error: { type: 'error', error: { type, message } } };
}

function sendError(res: ServerResponse, e: Violation, requestId: string): void {
  if (e.status === 429) res.setHeader('retry-after', '0');
  sendJson(res, e.status, { type: 'error', error: { type: e.type, message: e.message }, request_id: requestId });
}
