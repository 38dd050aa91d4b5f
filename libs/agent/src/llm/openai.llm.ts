import OpenAI from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { Logger } from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import { recordError, tracer } from '@parley/event-store';
import { chatResultAttributes, providerRequestAttributes } from './chat-span';
import {
  ChatOptions,
  ChatOutcome,
  ChatResult,
  LlmClient,
  LlmError,
  LlmMessage,
  LlmToolSpec,
  providerFailure,
  StoppedAttempt,
  withStoppedAttempts,
  ProviderClientOptions,
} from './llm.types';
import { chatCompletionRequest } from './openai-request';
import { ChatCompletionStreamed } from './openai-stream';
import { midStreamBackoffMs, sleepUnlessAborted } from './mid-stream-retry';

/** The code of a call refused because the model has no tool use: the turn turns to always-retrieve. */
export const TOOLS_UNSUPPORTED = 'llm_tools_unsupported';

/**
 * How compatible servers refuse `tools` for a model without tool use: Ollama ("… does not support
 * tools"), vLLM without a tool parser ("… tool choice requires --enable-auto-tool-choice …"),
 * llama.cpp's server without templates ("tools param requires --jinja flag").
 */
const TOOLS_REFUSAL =
  /does not support (tools|tool use|function calling)|tool choice requires|tools param requires|tools? (is|are) not supported/i;

/**
 * The Chat Completions adapter on the official `openai` SDK: OpenAI itself, Azure OpenAI's v1
 * endpoint, and every compatible server (vLLM, Ollama, llama.cpp, LM Studio) by OPENAI_BASE_URL.
 * The SDK retries 408/409/429/5xx, waiting as Retry-After says; a stream broken off after its 200
 * is asked again here. The caller's signal aborts the HTTP stream. No Message Batches.
 */
export class OpenAiLlm implements LlmClient {
  readonly provider = 'openai';
  readonly supportsTools = true;
  readonly supportsBatches = false;
  private readonly client: OpenAI;
  private readonly logger = new Logger(OpenAiLlm.name);
  private readonly warnedNoUsage = new Set<string>();

  constructor(private readonly opts: ProviderClientOptions) {
    this.client = new OpenAI({
      // a self-hosted server takes no key, the SDK wants one all the same
      apiKey: opts.apiKey ?? 'no-key',
      baseURL: opts.baseUrl,
      maxRetries: opts.maxRetries,
      timeout: 120_000,
    });
  }

  /** One model call in a `chat <model>` client span (GenAI semantic conventions, provider `openai`). */
  chatWithTools(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatOutcome> {
    const params = this.request(messages, tools, options);
    const attributes = providerRequestAttributes(
      {
        provider: this.provider,
        model: params.model,
        maxTokens: params.max_completion_tokens!,
        system: options.system,
      },
      messages,
      { baseUrl: this.client.baseURL, captureContent: this.opts.captureContent ?? false },
    );
    return tracer.startActiveSpan(`chat ${params.model}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      try {
        const result = await this.streamCall(params, options);
        span.setAttributes(chatResultAttributes(result, this.opts.captureContent ?? false));
        return { kind: 'answered' as const, result };
      } catch (e) {
        recordError(span, e);
        throw e;
      } finally {
        span.end();
      }
    });
  }

  /** The request body; exposed for tests. */
  request(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): ChatCompletionCreateParamsStreaming {
    return chatCompletionRequest(messages, tools, options, options.model ?? this.opts.model, this.opts.maxTokens);
  }

  /** The call streamed, asked again (with backoff) when a stream breaks off midway. */
  private async streamCall(params: ChatCompletionCreateParamsStreaming, options: ChatOptions): Promise<ChatResult> {
    const stopped: StoppedAttempt[] = [];
    const requestChars = JSON.stringify(params.messages).length + JSON.stringify(params.tools ?? []).length;
    for (let attempt = 1; ; attempt++) {
      const streamed = new ChatCompletionStreamed(params.model, requestChars);
      try {
        await this.streamOnce(params, options, attempt, streamed);
        const result = streamed.result();
        this.warnIfNoUsage(streamed, params.model);
        return stopped.length ? { ...result, stoppedAttempts: stopped } : result;
      } catch (e) {
        const error = classify(e, this.client.baseURL);
        const aborted = isAbort(error) || options.signal?.aborted === true;
        const billed = streamed.billed(aborted ? 'aborted' : 'broken');
        if (billed) stopped.push(billed);
        if (!(error instanceof LlmError) || !error.midStream || !error.retryable || attempt > this.opts.maxRetries)
          throw withStoppedAttempts(error, stopped);
        await sleepUnlessAborted(midStreamBackoffMs(attempt), options.signal);
        if (options.signal?.aborted) throw withStoppedAttempts(abortError(), stopped);
      }
    }
  }

  private async streamOnce(
    params: ChatCompletionCreateParamsStreaming,
    options: ChatOptions,
    attempt: number,
    streamed: ChatCompletionStreamed,
  ): Promise<void> {
    const stream = await this.client.chat.completions.create(params, { signal: options.signal });
    for await (const chunk of stream) {
      const text = streamed.see(chunk);
      if (text) options.onTextDelta?.(text, attempt);
    }
    // the SDK ends an aborted stream quietly: the abort is the caller's to see
    if (options.signal?.aborted) throw abortError();
    if (!streamed.finished)
      throw new LlmError('the stream ended before the model finished', 'llm_stream_cut', true, true);
  }

  private warnIfNoUsage(streamed: ChatCompletionStreamed, model: string): void {
    if (streamed.billed('broken')?.estimated !== true || this.warnedNoUsage.has(model)) return;
    this.warnedNoUsage.add(model);
    this.logger.warn(
      `the server sent no usage for ${model} (stream_options.include_usage): its calls are counted from their length, 4 characters a token`,
    );
  }
}

const MISSING_V1 = 'OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio) serve the API under /v1';
const pathEndsInV1 = (url: string) => /\/v1\/?$/.test(new URL(url).pathname);

/**
 * What to warn at boot about OPENAI_BASE_URL: a path without /v1, the usual Ollama mistake, after
 * which every turn fails "404 page not found". A warning, not a refusal: a proxy may serve the API
 * elsewhere.
 */
export function openAiBaseUrlWarning(baseUrl: string | undefined): string | undefined {
  if (!baseUrl || pathEndsInV1(baseUrl)) return undefined;
  return (
    `OPENAI_BASE_URL=${baseUrl} does not end in /v1: ${MISSING_V1} (http://127.0.0.1:11434/v1 for Ollama), ` +
    'and a server that does answers every turn 404 (docs/providers.md)'
  );
}

/** An abort as the rest of Parley knows one (isAbort: named AbortError), whichever SDK saw it. */
function abortError(): Error {
  return Object.assign(new Error('Request was aborted.'), { name: 'AbortError' });
}

/**
 * An SDK error as an LlmError that says whether asking again may help; an abort stays as it is.
 * The server's URL goes with what it said (the worker's log, never the reader): "Connection error."
 * alone does not say which server a self-hosted setup failed to reach.
 */
function classify(e: unknown, baseUrl: string): Error {
  if (e instanceof LlmError) return e;
  if (e instanceof OpenAI.APIUserAbortError) return abortError();
  if (e instanceof OpenAI.APIConnectionError)
    return providerFailure(`${e.message} (${baseUrl})`, 'llm_unreachable', true);
  if (e instanceof OpenAI.APIError) {
    const status = e.status ?? 0;
    // an error chunk after the 200: the status is gone, the stream was cut midway
    if (!status) return providerFailure(e.message, 'llm_stream_error', true, true);
    if (status === 400 && TOOLS_REFUSAL.test(e.message)) return providerFailure(e.message, TOOLS_UNSUPPORTED, false);
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const code = status === 429 ? 'llm_rate_limited' : status === 503 ? 'llm_overloaded' : `llm_http_${status}`;
    const where = status === 404 && !pathEndsInV1(baseUrl) ? `${baseUrl}; ${MISSING_V1}` : baseUrl;
    return providerFailure(`${e.message} (${where})`, code, retryable);
  }
  // the connection dropped while the body streamed (undici's "terminated")
  if (e instanceof TypeError) return providerFailure(e.message, 'llm_stream_cut', true, true);
  return e instanceof Error ? e : new Error(String(e));
}

const isAbort = (e: unknown): boolean => (e as Error)?.name === 'AbortError';
