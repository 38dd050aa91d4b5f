import OpenAI from 'openai';
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
} from 'openai/resources/chat/completions';
import { Logger } from '@nestjs/common';
import {
  ChatOptions,
  ChatOutcome,
  ChatResult,
  Completion,
  DEFAULT_TIMEOUT_MS,
  LlmClient,
  LlmError,
  LlmMessage,
  LlmToolSpec,
  ModelCapabilities,
  providerFailure,
  ProviderClientOptions,
} from './llm.types';
import { chatCompletionRequest } from './openai-request';
import { ChatCompletionStreamed, chatCompletionUsage, stopReasonOf } from './openai-stream';
import { abortError, classifySdkError, ProviderCall, StreamAttempt } from './provider-call';

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
 * A model on the Chat Completions API: tools offered (a model that refuses them is learned by the
 * router), no cited documents, no Message Batches.
 */
const CAPABILITIES: ModelCapabilities = { provider: 'openai', tools: true, documents: false, batches: false };

/** Characters per token, for the estimate of a call whose usage never came. */
const CHARS_PER_TOKEN = 4;

/**
 * The Chat Completions adapter on the official `openai` SDK: OpenAI itself, Azure OpenAI's v1
 * endpoint, and every compatible server (vLLM, Ollama, llama.cpp, LM Studio) by OPENAI_BASE_URL.
 * The SDK retries 408/409/429/5xx, waiting as Retry-After says; a stream broken off after its 200
 * is asked again here. The caller's signal aborts the HTTP stream. No Message Batches.
 */
export class OpenAiLlm implements LlmClient {
  /** false: a compatible server may serve a model without tool use (the router learns which) */
  readonly everyModelTakesTools = false;
  private readonly client: OpenAI;
  private readonly calls: ProviderCall;
  private readonly logger = new Logger(OpenAiLlm.name);
  private readonly warnedNoUsage = new Set<string>();

  constructor(private readonly opts: ProviderClientOptions) {
    this.client = new OpenAI({
      // a self-hosted server takes no key, the SDK wants one all the same
      apiKey: opts.apiKey ?? 'no-key',
      baseURL: opts.baseUrl,
      maxRetries: opts.maxRetries,
      timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    });
    const baseUrl = this.client.baseURL;
    this.calls = new ProviderCall({
      provider: CAPABILITIES.provider,
      baseUrl,
      maxRetries: opts.maxRetries,
      captureContent: opts.captureContent ?? false,
      classify: (e) => classify(e, baseUrl),
    });
  }

  capabilitiesOf(): ModelCapabilities {
    return CAPABILITIES;
  }

  /** One model call, streamed, in its span. */
  chatWithTools(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatOutcome> {
    const params = this.request(messages, tools, options);
    const request = { model: params.model, maxTokens: params.max_completion_tokens!, system: options.system };
    return this.calls.traced(request, messages, async () => ({
      kind: 'answered',
      result: await this.calls.streamed(options, (n) => this.attempt(params, options, n)),
    }));
  }

  /**
   * One request sent as it is, not streamed (contextual retrieval's, whose prompt is a whole
   * book: the span leaves the prompt out), with the adapter's span, retries and errors. A server
   * that reports no usage is billed by the characters sent and received, not as free.
   */
  complete(params: ChatCompletionCreateParamsNonStreaming): Promise<Completion> {
    const system = params.messages.flatMap((m) =>
      m.role === 'system' && typeof m.content === 'string' ? [m.content] : [],
    );
    const request = { model: params.model, maxTokens: params.max_completion_tokens ?? this.opts.maxTokens, system };
    return this.calls.traced(request, undefined, () =>
      this.calls.once(async (): Promise<Completion> => {
        const reply = await this.client.chat.completions.create(params);
        const choice = reply.choices[0];
        const text = choice?.message.content ?? '';
        const usage = reply.usage
          ? chatCompletionUsage(reply.usage)
          : this.estimatedUsage(params.model, JSON.stringify(params.messages).length, text.length);
        const result: ChatResult = {
          content: text ? [{ type: 'text', text }] : [],
          stopReason: stopReasonOf(choice?.finish_reason ?? undefined),
          usage,
          model: params.model,
          ...(reply.model && reply.model !== params.model ? { responseModel: reply.model } : {}),
        };
        return { kind: 'answered', messageId: reply.id, result };
      }),
    );
  }

  /** The request body; exposed for tests. */
  request(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): ChatCompletionCreateParamsStreaming {
    return chatCompletionRequest(messages, tools, options, options.model ?? this.opts.model, this.opts.maxTokens);
  }

  /** One streamed attempt, put together chunk by chunk; billed by its usage chunk, or an estimate. */
  private attempt(params: ChatCompletionCreateParamsStreaming, options: ChatOptions, attempt: number): StreamAttempt {
    const requestChars = JSON.stringify(params.messages).length + JSON.stringify(params.tools ?? []).length;
    const streamed = new ChatCompletionStreamed(params.model, requestChars);
    return {
      billed: (cause) => streamed.billed(cause),
      run: async () => {
        const stream = await this.client.chat.completions.create(params, { signal: options.signal });
        for await (const chunk of stream) {
          const text = streamed.see(chunk);
          if (text) options.onTextDelta?.(text, attempt);
        }
        // the SDK ends an aborted stream quietly: the abort is the caller's to see
        if (options.signal?.aborted) throw abortError();
        if (!streamed.finished)
          throw new LlmError('the stream ended before the model finished', 'llm_stream_cut', true, true);
        const result = streamed.result();
        if (streamed.billed('broken')?.estimated) this.warnNoUsage(params.model);
        return result;
      },
    };
  }

  /** A call the server reported no usage for, counted from its length. */
  private estimatedUsage(model: string, requestChars: number, answerChars: number) {
    this.warnNoUsage(model);
    return {
      inputTokens: Math.ceil(requestChars / CHARS_PER_TOKEN),
      outputTokens: Math.ceil(answerChars / CHARS_PER_TOKEN),
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    };
  }

  private warnNoUsage(model: string): void {
    if (this.warnedNoUsage.has(model)) return;
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

/**
 * An SDK error as an LlmError that says whether asking again may help; an abort as an abort.
 * The server's URL goes with what it said (the worker's log, never the reader): "Connection error."
 * alone does not say which server a self-hosted setup failed to reach.
 */
function classify(e: unknown, baseUrl: string): Error {
  return classifySdkError(e, {
    APIUserAbortError: OpenAI.APIUserAbortError,
    APIConnectionError: OpenAI.APIConnectionError,
    APIError: OpenAI.APIError,
    overloadedStatus: 503,
    detail: (message, status) =>
      `${message} (${status === 404 && !pathEndsInV1(baseUrl) ? `${baseUrl}; ${MISSING_V1}` : baseUrl})`,
    // an error chunk after the 200: the stream was cut midway
    inStream: (e) => providerFailure(e.message, 'llm_stream_error', true, true),
    refusal: (status, message) =>
      status === 400 && TOOLS_REFUSAL.test(message) ? providerFailure(message, TOOLS_UNSUPPORTED, false) : undefined,
    // the connection dropped while the body streamed (undici's "terminated")
    other: (e) => (e instanceof TypeError ? providerFailure(e.message, 'llm_stream_cut', true, true) : undefined),
  });
}
