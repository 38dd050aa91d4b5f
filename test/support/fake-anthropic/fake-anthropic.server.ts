/**
 * A real HTTP server speaking the Anthropic Messages API (POST /v1/messages, JSON or SSE),
 * so the official SDK, in this process or in a product process given ANTHROPIC_BASE_URL,
 * runs unchanged against scripted replies. It rejects requests the real API would reject.
 */
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultReply } from './default-responder';
import {
  isFakeError,
  type FakeAnthropicOptions,
  type FakeError,
  type FakeReply,
  type FakeStep,
  type RecordedRequest,
  type RejectedRequest,
} from './fake-anthropic.types';
import { estimateTokens, PromptCache } from './prompt-cache';
import { newId, renderMessage, streamEvents } from './render-reply';
import { startSse, writeSse } from './sse-writer';
import { checkHeaders, CURRENT_VERSION, header, validateBody, type Violation } from './validate-request';

export * from './fake-anthropic.types';
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
    this.cache.clear();
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
    const usage =
      this.options.simulatePromptCache === false
        ? {
            input_tokens: Math.max(1, estimateTokens(recorded.rawBody.length)),
            cache_read_input_tokens: 0,
            cache_creation_input_tokens: 0,
          }
        : this.cache.account(body);
    const message = renderMessage(answer, body.model, usage);
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

function sendError(res: ServerResponse, e: Violation, requestId: string): void {
  if (e.status === 429) res.setHeader('retry-after', '0');
  sendJson(res, e.status, { type: 'error', error: { type: e.type, message: e.message }, request_id: requestId });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
