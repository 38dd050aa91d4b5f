import Anthropic from '@anthropic-ai/sdk';
import type {
  Message,
  MessageCreateParamsNonStreaming,
  MessageCreateParamsStreaming,
  MessageParam,
  Tool,
  TextBlockParam,
  TextCitation,
  DocumentBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import { Usage } from '@parley/conversation';
import {
  ChatOptions,
  ChatOutcome,
  ChatResult,
  Completion,
  DEFAULT_TIMEOUT_MS,
  LlmClient,
  LlmCitation,
  LlmDocumentBlock,
  LlmError,
  LlmMessage,
  LlmToolSpec,
  ModelCapabilities,
  providerFailure,
  ProviderClientOptions,
} from './llm.types';
import { StreamedUsage } from './streamed-usage';
import { classifySdkError, ProviderCall, StreamAttempt } from './provider-call';

const EPHEMERAL = { type: 'ephemeral' as const };

/** Every Claude model: tool use, cited documents under the prompt cache, the Message Batches API. */
const CAPABILITIES: ModelCapabilities = { provider: 'anthropic', tools: true, documents: 'cached', batches: true };

/**
 * The Anthropic adapter on the official SDK (which reads ANTHROPIC_API_KEY/ANTHROPIC_BASE_URL and
 * retries 429/5xx/529 with backoff). Streams through messages.stream() so text deltas flow while
 * the model writes, and aborts with the turn's signal. Cache breakpoints (at most 4): the last
 * tool, the system prompt, the end of the earlier turns, and the end of the request.
 */
export class AnthropicLlm implements LlmClient {
  readonly everyModelTakesTools = true;
  private readonly client: Anthropic;
  private readonly calls: ProviderCall;

  constructor(private readonly opts: ProviderClientOptions) {
    this.client = new Anthropic({
      apiKey: opts.apiKey,
      baseURL: opts.baseUrl,
      maxRetries: opts.maxRetries,
      timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      // the `chat` span is the call's one GenAI span (it spans the mid-stream retries too):
      // the SDK's own spans would count every call's tokens twice in a GenAI-aware backend
      openTelemetry: false,
    });
    this.calls = new ProviderCall({
      provider: CAPABILITIES.provider,
      baseUrl: this.client.baseURL,
      maxRetries: opts.maxRetries,
      captureContent: opts.captureContent ?? false,
      classify,
    });
  }

  capabilitiesOf(): ModelCapabilities {
    return CAPABILITIES;
  }

  /** One model call, in its span; a batch call's submission and its looks at the batch too. */
  chatWithTools(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatOutcome> {
    const params = this.request(messages, tools, options);
    const viaBatch = options.viaBatch;
    return this.calls.traced(spanRequest(params), messages, async () =>
      viaBatch
        ? this.calls.once(() => this.callViaBatch(params, viaBatch, options.signal))
        : { kind: 'answered', result: await this.calls.streamed(options, (n) => this.attempt(params, options, n)) },
    );
  }

  /**
   * One request sent as it is, not streamed (contextual retrieval's, whose prompt is a whole
   * book: the span leaves the prompt out), with the adapter's span, retries and errors.
   */
  complete(params: MessageCreateParamsNonStreaming): Promise<Completion> {
    return this.calls.traced(spanRequest(params), undefined, () =>
      this.calls.once(async (): Promise<Completion> => {
        const reply = await this.client.messages.create(params);
        return { kind: 'answered', messageId: reply.id, result: chatResult(reply) };
      }),
    );
  }

  /** Submits the call in a batch of its own, or looks at the batch already holding it. */
  private callViaBatch(
    params: MessageCreateParamsStreaming,
    { callId, providerBatchId }: NonNullable<ChatOptions['viaBatch']>,
    signal?: AbortSignal,
  ): Promise<ChatOutcome> {
    return providerBatchId
      ? this.batchResult(providerBatchId, batchCustomId(callId), signal)
      : this.submitBatch(batchCustomId(callId), params, signal);
  }

  /** One streamed attempt: the text as it comes, the usage billed as the events say it. */
  private attempt(params: MessageCreateParamsStreaming, options: ChatOptions, attempt: number): StreamAttempt {
    const usage = new StreamedUsage();
    return {
      billed: (cause) => {
        const billed = usage.billed();
        return billed && { ...billed, cause };
      },
      run: async () => {
        const stream = this.client.messages.stream(params, { signal: options.signal });
        stream.on('streamEvent', (event) => usage.see(event));
        if (options.onTextDelta) stream.on('text', (delta) => options.onTextDelta!(delta, attempt));
        return chatResult(await stream.finalMessage());
      },
    };
  }

  /**
   * Sends the call as a batch of one request. The batch is priced per request, so one request
   * per batch costs what it would in a batch of many; the caller records the id and polls.
   */
  private async submitBatch(
    customId: string,
    params: MessageCreateParamsStreaming,
    signal?: AbortSignal,
  ): Promise<ChatOutcome> {
    const { stream: _stream, ...body } = params;
    const batch = await this.client.messages.batches.create(
      { requests: [{ custom_id: customId, params: body as MessageCreateParamsNonStreaming }] },
      { signal },
    );
    return { kind: 'submitted', providerBatchId: batch.id };
  }

  /** The call's answer once its batch has ended; `pending` while it has not. */
  private async batchResult(providerBatchId: string, customId: string, signal?: AbortSignal): Promise<ChatOutcome> {
    const batch = await this.client.messages.batches.retrieve(providerBatchId, {}, { signal });
    if (batch.processing_status !== 'ended')
      return { kind: 'pending', providerBatchId, status: batch.processing_status };
    for await (const item of await this.client.messages.batches.results(providerBatchId, {}, { signal })) {
      if (item.custom_id !== customId) continue;
      const r = item.result;
      if (r.type === 'succeeded') return { kind: 'answered', result: { ...chatResult(r.message), batched: true } };
      if (r.type === 'errored') {
        const type = r.error.error.type;
        const code = RETRYABLE_ERROR_TYPES[type];
        throw providerFailure(r.error.error.message, code ?? `llm_batch_${type}`, code !== undefined);
      }
      // expired (not processed within 24 hours) or canceled: nothing was charged; asking again may answer
      throw new LlmError(`provider batch ${providerBatchId}: the request ${r.type}`, `llm_batch_${r.type}`, true);
    }
    throw new LlmError(`provider batch ${providerBatchId} has no result for ${customId}`, 'llm_batch_missing', false);
  }

  /** The request body; exposed for tests of byte-identical prefixes. */
  request(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): MessageCreateParamsStreaming {
    const toolParams: Tool[] = tools.map((t, i) => ({
      name: t.name,
      description: t.description,
      input_schema: t.inputSchema,
      ...(i === tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
    }));
    // documents with their own breakpoints (a whole book) come right after the system prompt and
    // cache it with them: its breakpoint goes to them, so the request keeps within 4. Otherwise the
    // breakpoint ends the part every reader of a book shares; the reader's tail is cached with their messages
    const documentsCached = messages.some((m) => m.content.some((b) => b.type === 'document' && b.cacheBreakpoint));
    const system: TextBlockParam[] = [
      { type: 'text', text: options.system, ...(documentsCached ? {} : { cache_control: EPHEMERAL }) },
      ...(options.systemTail ? [{ type: 'text' as const, text: options.systemTail }] : []),
    ];
    const breakpoints = new Set([messages.length - 1]);
    if (options.prefixEnd !== undefined && options.prefixEnd >= 0) breakpoints.add(options.prefixEnd);
    return {
      model: options.model ?? this.opts.model,
      max_tokens: options.maxTokens ?? this.opts.maxTokens,
      system,
      messages: messages.map((m, i) => toParam(m, breakpoints.has(i))),
      ...(toolParams.length ? { tools: toolParams, tool_choice: { type: options.toolChoice ?? 'auto' } } : {}),
      stream: true,
    } as MessageCreateParamsStreaming;
  }
}

function chatResult(final: Message): ChatResult {
  return {
    content: final.content.flatMap((b): ChatResult['content'] =>
      b.type === 'text'
        ? [
            {
              type: 'text' as const,
              text: b.text,
              ...(b.citations?.length ? { citations: citationsOf(b.citations) } : {}),
            },
          ]
        : b.type === 'tool_use'
          ? [{ type: 'tool_use' as const, id: b.id, name: b.name, input: b.input }]
          : [],
    ),
    stopReason: final.stop_reason ?? 'end_turn',
    usage: toUsage(final.usage),
    model: final.model,
  };
}

/** A batch request's custom_id: 1-64 of [a-zA-Z0-9_-] (a step key's slashes become `_`). */
export function batchCustomId(callId: string): string {
  return callId.replace(/[^a-zA-Z0-9_-]/g, '_').slice(-64);
}

function toParam(m: LlmMessage, breakpoint: boolean): MessageParam {
  const blocks = m.content.map((b) => {
    switch (b.type) {
      case 'text':
        return { type: 'text' as const, text: b.text };
      case 'document':
        return documentParam(b);
      case 'tool_use':
        return { type: 'tool_use' as const, id: b.id, name: b.name, input: b.input as Record<string, unknown> };
      case 'tool_result':
        return {
          type: 'tool_result' as const,
          tool_use_id: b.toolUseId,
          content: b.content,
          ...(b.isError ? { is_error: true } : {}),
        };
    }
  });
  if (breakpoint && blocks.length)
    blocks[blocks.length - 1] = { ...blocks[blocks.length - 1], cache_control: EPHEMERAL } as never;
  return { role: m.role, content: blocks } as MessageParam;
}

/** A custom content document: one text block per passage, so a citation names passages by index. */
function documentParam(d: LlmDocumentBlock): DocumentBlockParam {
  return {
    type: 'document',
    source: { type: 'content', content: d.passages.map((text) => ({ type: 'text' as const, text })) },
    title: d.title,
    ...(d.context ? { context: d.context } : {}),
    citations: { enabled: true },
    ...(d.cacheBreakpoint ? { cache_control: d.cacheTtl ? { ...EPHEMERAL, ttl: d.cacheTtl } : EPHEMERAL } : {}),
  };
}

/** The citations of an answer's text block that point into documents of the request (others are not Parley's). */
function citationsOf(citations: TextCitation[] | null | undefined): LlmCitation[] {
  return (citations ?? []).flatMap((c): LlmCitation[] =>
    c.type === 'content_block_location'
      ? [
          {
            type: 'block',
            documentIndex: c.document_index,
            startBlock: c.start_block_index,
            endBlock: c.end_block_index,
            citedText: c.cited_text,
          },
        ]
      : c.type === 'char_location'
        ? [
            {
              type: 'char',
              documentIndex: c.document_index,
              startChar: c.start_char_index,
              endChar: c.end_char_index,
              citedText: c.cited_text,
            },
          ]
        : [],
  );
}

/** The API's usage in Parley's terms (the same fields, camelCase, absent counts as 0). */
export function toUsage(u: Anthropic.Messages.Usage): Usage {
  return {
    inputTokens: u.input_tokens ?? 0,
    outputTokens: u.output_tokens ?? 0,
    cacheReadInputTokens: u.cache_read_input_tokens ?? 0,
    cacheCreationInputTokens: u.cache_creation_input_tokens ?? 0,
  };
}

/** Error types the API sends, in an HTTP error body or as an `error` event inside a stream. */
const RETRYABLE_ERROR_TYPES: Record<string, string> = {
  overloaded_error: 'llm_overloaded',
  rate_limit_error: 'llm_rate_limited',
  api_error: 'llm_api_error',
  timeout_error: 'llm_timeout',
};

/** The Anthropic SDK's errors in Parley's classification (provider-call.ts). */
const classify = (e: unknown): Error =>
  classifySdkError(e, {
    APIUserAbortError: Anthropic.APIUserAbortError,
    APIConnectionError: Anthropic.APIConnectionError,
    APIError: Anthropic.APIError,
    overloadedStatus: 529,
    detail: (message) => message,
    inStream: (e) => {
      // an error event after the 200: the error type says what happened
      const type = (e.error as { error?: { type?: string } } | undefined)?.error?.type ?? '';
      const code = RETRYABLE_ERROR_TYPES[type];
      return providerFailure(e.message, code ?? `llm_stream_${type || 'error'}`, code !== undefined, true);
    },
  });

/** The span's view of a request: the system prompt's blocks as sent. */
function spanRequest(params: MessageCreateParamsStreaming | MessageCreateParamsNonStreaming) {
  const system = params.system;
  return {
    model: params.model,
    maxTokens: params.max_tokens,
    system: system === undefined ? [] : typeof system === 'string' ? system : system.map((b) => b.text),
  };
}
