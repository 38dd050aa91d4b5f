/**
 * A real HTTP server speaking OpenAI's Chat Completions API (POST /v1/chat/completions, JSON or
 * SSE chunks ending with the usage chunk and `data: [DONE]`), so the official `openai` SDK, in
 * this process or in a product process given OPENAI_BASE_URL=fake.url, runs unchanged against
 * scripted replies. It refuses what the real API refuses (validate-chat-request.ts), refuses
 * tools for the models named in `modelsWithoutTools` as Ollama does, and simulates OpenAI's
 * automatic prompt cache (`prompt_tokens_details.cached_tokens`).
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { validateChatBody } from './validate-chat-request';
import { nextDirectiveStep } from '../tool-directives';
import { parseJson, readBody, sendJson } from '../http-body';

export interface FakeChatToolCall {
  id?: string;
  name: string;
  /** an object is sent as its JSON; a string as it is (a model's garbled arguments) */
  arguments: unknown;
}

/** One scripted completion. */
export interface FakeChatReply {
  text?: string;
  toolCalls?: FakeChatToolCall[];
  /** default: `tool_calls` with tool calls, else `stop` */
  finishReason?: 'stop' | 'tool_calls' | 'length';
  /** overrides the simulated counts */
  usage?: { prompt_tokens?: number; completion_tokens?: number; cached_tokens?: number };
  /** no usage chunk even when asked for one, no usage in a whole answer (some compatible servers) */
  omitUsage?: boolean;
  /** pause before each content chunk, for cancel tests */
  delayMsPerChunk?: number;
  /** after this many content chunks, an `error` chunk ends the stream (as OpenAI does when it fails midway) */
  breakOff?: { afterChunks: number; message?: string };
}

export interface FakeChatError {
  error: { status: number; message: string; type?: string; code?: string | null; retryAfterSeconds?: number };
}

export type FakeChatStep =
  FakeChatReply | FakeChatError | ((req: RecordedChatRequest) => FakeChatReply | FakeChatError);

export interface RecordedChatRequest {
  headers: Record<string, string | string[] | undefined>;
  body: any;
  rawBody: string;
  at: number;
  aborted?: boolean;
}

export interface RejectedChatRequest {
  req: RecordedChatRequest;
  status: number;
  message: string;
}

export interface FakeOpenAiOptions {
  defaultResponder?: (req: RecordedChatRequest) => FakeChatReply | FakeChatError;
  /** model ids answered 400 "… does not support tools" when a request offers tools (Ollama's refusal) */
  modelsWithoutTools?: string[];
  /** prompts shorter than this are not cached (OpenAI: 1024 tokens); default 0 */
  minCacheableTokens?: number;
}

export const isChatError = (x: FakeChatReply | FakeChatError): x is FakeChatError => 'error' in x;

/** An error step with the type the real API uses for `status`. */
export function chatApiError(status: number, message = `fake ${status}`, retryAfterSeconds?: number): FakeChatError {
  const type = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { status, message, type, code: status === 429 ? 'rate_limit_exceeded' : null, retryAfterSeconds } };
}

const estimateTokens = (chars: number): number => Math.ceil(chars / 4);

export class FakeOpenAi {
  readonly requests: RecordedChatRequest[] = [];
  readonly rejected: RejectedChatRequest[] = [];
  private readonly script: FakeChatStep[] = [];
  private readonly changes = new EventEmitter();
  private readonly cachedPrefixes = new Set<string>();
  private abortedCount = 0;

  private constructor(
    private readonly server: Server,
    /** the API's base (…/v1): what OPENAI_BASE_URL is set to */
    readonly url: string,
    private readonly options: FakeOpenAiOptions,
  ) {}

  static async start(options: FakeOpenAiOptions = {}): Promise<FakeOpenAi> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    const fake = new FakeOpenAi(server, `http://127.0.0.1:${port}/v1`, options);
    server.on('request', (req, res) => {
      fake.handle(req, res).catch((err) => {
        if (res.headersSent) res.destroy();
        else sendError(res, 500, { message: `fake-openai failed: ${(err as Error).message}`, type: 'server_error' });
      });
    });
    return fake;
  }

  get aborted(): number {
    return this.abortedCount;
  }

  enqueue(...steps: FakeChatStep[]): void {
    this.script.push(...steps);
  }

  reset(): void {
    this.script.length = 0;
    this.requests.length = 0;
    this.rejected.length = 0;
    this.abortedCount = 0;
    this.cachedPrefixes.clear();
  }

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
        reject(new Error(`FakeOpenAi: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.changes.on('change', onChange);
    });
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const recorded: RecordedChatRequest = { headers: req.headers, body: parseJson(rawBody), rawBody, at: Date.now() };
    res.setHeader('x-request-id', `req_${randomBytes(12).toString('hex')}`);
    // the model list, which Parley's /readyz asks to see that the server answers
    if (req.method === 'GET' && (req.url ?? '').split('?')[0] === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ object: 'list', data: [] }));
    }
    const refusal = this.refusalOf(req, recorded);
    if (refusal) {
      this.rejected.push({ req: recorded, status: refusal.status, message: refusal.message });
      this.changes.emit('change');
      return sendError(res, refusal.status, refusal);
    }
    this.requests.push(recorded);
    this.changes.emit('change');

    const answer = this.nextAnswer(recorded);
    if (isChatError(answer)) {
      if (answer.error.retryAfterSeconds !== undefined)
        res.setHeader('retry-after', String(answer.error.retryAfterSeconds));
      return sendError(res, answer.error.status, answer.error);
    }
    const completion = this.completion(recorded.body, answer);
    if (!recorded.body.stream) return sendJson(res, 200, completion.json());

    const clientGone = new AbortController();
    res.on('close', () => {
      if (res.writableFinished) return;
      clientGone.abort();
      recorded.aborted = true;
      this.abortedCount++;
      this.changes.emit('change');
    });
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.flushHeaders();
    const withUsage = recorded.body.stream_options?.include_usage === true && !answer.omitUsage;
    let contentChunks = 0;
    for (const chunk of completion.chunks(withUsage)) {
      if (chunk.isContent) {
        if (answer.breakOff && contentChunks++ === answer.breakOff.afterChunks) {
          const error = {
            message: answer.breakOff.message ?? 'The server had an error while processing your request.',
            type: 'server_error',
            param: null,
            code: null,
          };
          res.end(`data: ${JSON.stringify({ error })}\n\n`);
          return;
        }
        if (answer.delayMsPerChunk)
          await sleep(answer.delayMsPerChunk, undefined, { signal: clientGone.signal }).catch(() => undefined);
      }
      if (clientGone.signal.aborted || res.destroyed) return;
      res.write(`data: ${JSON.stringify(chunk.data)}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  }

  private refusalOf(
    req: IncomingMessage,
    recorded: RecordedChatRequest,
  ): { status: number; message: string; type: string; param?: string | null; code?: string | null } | null {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || path !== '/v1/chat/completions')
      return { status: 404, message: `Invalid URL (${req.method} ${path})`, type: 'invalid_request_error' };
    const auth = req.headers.authorization;
    if (!auth || !/^Bearer \S+$/.test(auth))
      return {
        status: 401,
        message:
          "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth.",
        type: 'invalid_request_error',
      };
    const v =
      recorded.body === undefined
        ? { message: 'We could not parse the JSON body of your request.', param: null, code: null }
        : validateChatBody(recorded.body);
    if (v) return { status: 400, type: 'invalid_request_error', ...v };
    const model = recorded.body.model;
    if (recorded.body.tools?.length && this.options.modelsWithoutTools?.includes(model))
      // Ollama's words, and its error type
      return {
        status: 400,
        message: `registry.ollama.ai/library/${model}:latest does not support tools`,
        type: 'api_error',
      };
    return null;
  }

  private nextAnswer(req: RecordedChatRequest): FakeChatReply | FakeChatError {
    const step = this.script.shift();
    if (step === undefined) return (this.options.defaultResponder ?? defaultChatReply)(req);
    return typeof step === 'function' ? step(req) : step;
  }

  /** The completion for `body`: its usage from the request's length and the prompt cache. */
  private completion(body: any, reply: FakeChatReply) {
    const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
    const created = Math.floor(Date.now() / 1000);
    const model = body.model as string;
    const calls = (reply.toolCalls ?? []).map((c) => ({
      id: c.id ?? `call_${randomBytes(12).toString('hex')}`,
      name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    }));
    const text = reply.text ?? (calls.length ? '' : 'OK');
    const finish = reply.finishReason ?? (calls.length ? 'tool_calls' : 'stop');
    const promptTokens =
      reply.usage?.prompt_tokens ??
      estimateTokens(JSON.stringify(body.messages).length + JSON.stringify(body.tools ?? []).length);
    const cached = reply.usage?.cached_tokens ?? this.cachedTokens(body, promptTokens);
    const completionTokens =
      reply.usage?.completion_tokens ??
      Math.max(1, estimateTokens(text.length + calls.reduce((n, c) => n + c.name.length + c.arguments.length, 0)));
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    };
    const head = {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      system_fingerprint: 'fp_fake',
      service_tier: 'default',
    };
    return {
      json: () => ({
        id,
        object: 'chat.completion',
        created,
        model,
        system_fingerprint: 'fp_fake',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: text || null,
              refusal: null,
              annotations: [],
              ...(calls.length
                ? {
                    tool_calls: calls.map((c) => ({
                      id: c.id,
                      type: 'function',
                      function: { name: c.name, arguments: c.arguments },
                    })),
                  }
                : {}),
            },
            logprobs: null,
            finish_reason: finish,
          },
        ],
        ...(reply.omitUsage ? {} : { usage }),
      }),
      chunks: (withUsage: boolean): Array<{ data: unknown; isContent: boolean }> => {
        const u = withUsage ? { usage: null } : {};
        const chunk = (delta: object, finish_reason: string | null = null) => ({
          ...head,
          choices: [{ index: 0, delta, logprobs: null, finish_reason }],
          ...u,
        });
        const out: Array<{ data: unknown; isContent: boolean }> = [
          { data: chunk({ role: 'assistant', content: '', refusal: null }), isContent: false },
        ];
        for (const piece of text.match(/\S+\s*|\s+/g) ?? [])
          out.push({ data: chunk({ content: piece }), isContent: true });
        calls.forEach((c, index) => {
          out.push({
            data: chunk({
              tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }],
            }),
            isContent: true,
          });
          for (const piece of c.arguments.match(/.{1,12}/gs) ?? [])
            out.push({ data: chunk({ tool_calls: [{ index, function: { arguments: piece } }] }), isContent: true });
        });
        out.push({ data: chunk({}, finish), isContent: false });
        if (withUsage) out.push({ data: { ...head, choices: [], usage }, isContent: false });
        return out;
      },
    };
  }

  /**
   * OpenAI's automatic prompt cache: the longest run of leading messages (with the same model and
   * tools) that an earlier request sent, counted in 128-token steps, once at least minCacheableTokens.
   */
  private cachedTokens(body: any, promptTokens: number): number {
    const base = JSON.stringify([body.model, body.tools ?? []]);
    let chars = base.length;
    let cachedChars = 0;
    const keys: string[] = [];
    let key = base;
    for (const m of body.messages) {
      key += JSON.stringify(m);
      chars += JSON.stringify(m).length;
      keys.push(key);
      if (this.cachedPrefixes.has(key)) cachedChars = chars;
    }
    for (const k of keys) this.cachedPrefixes.add(k);
    const tokens = Math.min(promptTokens, estimateTokens(cachedChars));
    if (tokens < Math.max(this.options.minCacheableTokens ?? 0, 1)) return 0;
    return Math.floor(tokens / 128) * 128;
  }
}

/**
 * What the fake answers when no step is scripted: the tools the question names with `CALL:<tool>`
 * (test/support/tool-directives.ts), one after another, then what they said; else a search with
 * the question for a fresh question when a tool is offered, then an answer citing [1] once the
 * tool has answered.
 */
export function defaultChatReply(req: RecordedChatRequest): FakeChatReply {
  const messages: any[] = req.body.messages;
  const question = lastUserText(messages);
  const directed = directedChatReply(req, question);
  if (directed) return directed;
  // the tool a question goes to: the first one that takes a query (search_book beside the reading tools)
  const tool = req.body.tools?.map((t: any) => t.function).find((f: any) => f?.parameters?.properties?.query);
  const lastAssistant = messages.map((m) => m.role).lastIndexOf('assistant');
  const results = messages.slice(lastAssistant + 1).filter((m) => m.role === 'tool');
  if (lastAssistant >= 0 && results.length) {
    const found = results.map((m) => textOf(m.content)).join(' ');
    return { text: `Answer: ${found.replace(/\s+/g, ' ').trim().slice(0, 80)} [1]` };
  }
  if (tool && req.body.tool_choice !== 'none')
    return { toolCalls: [{ name: tool.name, arguments: { query: question } }] };
  return { text: `Answer: ${question.replace(/\s+/g, ' ').trim().slice(0, 80)}` };
}

/** The next step of a question's `CALL:` directives: the calls this turn made so far are after the question. */
function directedChatReply(req: RecordedChatRequest, question: string): FakeChatReply | null {
  const messages: any[] = req.body.messages;
  const since = messages.slice(messages.map((m) => m.role).lastIndexOf('user') + 1);
  const offered = req.body.tool_choice === 'none' ? [] : (req.body.tools ?? []).map((t: any) => t.function?.name);
  const step = nextDirectiveStep(
    question,
    offered,
    since.flatMap((m) => m.tool_calls ?? []).length,
    since.filter((m) => m.role === 'tool').map((m) => textOf(m.content)),
  );
  if (!step) return null;
  if ('text' in step) return { text: step.text };
  return { toolCalls: [{ name: step.call.name, arguments: step.call.input }] };
}

export function lastUserText(messages: any[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user') return textOf(messages[i].content);
  return '';
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? content.map((p: any) => p.text ?? '').join(' ') : '';
}

function sendError(
  res: ServerResponse,
  status: number,
  e: { message: string; type?: string; param?: string | null; code?: string | null },
): void {
  sendJson(res, status, {
    error: {
      message: e.message,
      type: e.type ?? 'invalid_request_error',
      param: e.param ?? null,
      code: e.code ?? null,
    },
  });
}
