import Anthropic from '@anthropic-ai/sdk';
import { Attributes, SpanKind } from '@opentelemetry/api';
import { recordError, tracer } from '@parley/event-store';
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
  LlmClient,
  LlmCitation,
  LlmDocumentBlock,
  LlmError,
  LlmMessage,
  LlmToolSpec,
  providerFailure,
  StoppedAttempt,
  withStoppedAttempts,
  ProviderClientOptions,
} from './llm.types';
import { StreamedUsage } from './streamed-usage';
import { chatRequestAttributes, chatResultAttributes } from './chat-span';
import { midStreamBackoffMs, sleepUnlessAborted } from './mid-stream-retry';

const EPHEMERAL = { type: 'ephemeral' as const };

/**
 * The Anthropic adapter on the official SDK (which reads ANTHROPIC_API_KEY/ANTHROPIC_BASE_URL and
 * retries 429/5xx/529 with backoff). Streams through messages.stream() so text deltas flow while
 * the model writes, and aborts with the turn's signal. Cache breakpoints (at most 4): the last
 * tool, the system prompt, the end of the earlier turns, and the end of the request.
 */
export class AnthropicLlm implements LlmClient {
  readonly provider = 'anthropic';
  readonly supportsTools = true;
  readonly supportsBatches = true;
  readonly documents = 'cached' as const;
  private readonly client: Anthropic;

  constructor(private readonly opts: ProviderClientOptions) {
    this.client = new Anthropic({
      apiKey: opts.apiKey,
      baseURL: opts.baseUrl,
      maxRetries: opts.maxRetries,
      timeout: 120_000,
      // the `chat` span below is the call's one GenAI span (it spans the mid-stream retries too):
      // the SDK's own spans would count every call's tokens twice in a GenAI-aware backend
      openTelemetry: false,
    });
  }

  /**
   * One model call in a `chat <model>` client span (GenAI semantic conventions). A batch call's
   * submission and its looks at the batch are spans too, without a result until it has one.
   */
  chatWithTools(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatOutcome> {
    const params = this.request(messages, tools, options);
    const attributes: Attributes = chatRequestAttributes(params, messages, {
      baseUrl: this.client.baseURL,
      captureContent: this.opts.captureContent ?? false,
    });
    return tracer.startActiveSpan(`chat ${params.model}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      try {
        const outcome = options.viaBatch
          ? await this.callViaBatch(params, options.viaBatch, options.signal)
          : { kind: 'answered' as const, result: await this.streamCall(params, options) };
        if (outcome.kind === 'answered')
          span.setAttributes(chatResultAttributes(outcome.result, this.opts.captureContent ?? false));
        else span.setAttribute('parley.llm.provider_batch_id', outcome.providerBatchId);
        return outcome;
      } catch (e) {
        recordError(span, e);
        throw e;
      } finally {
        span.end();
      }
    });
  }

  /** Submits the call in a batch of its own, or looks at the batch already holding it. */
  private async callViaBatch(
    params: MessageCreateParamsStreaming,
    { callId, providerBatchId }: NonNullable<ChatOptions['viaBatch']>,
    signal?: AbortSignal,
  ): Promise<ChatOutcome> {
    try {
      return providerBatchId
        ? await this.batchResult(providerBatchId, batchCustomId(callId), signal)
        : await this.submitBatch(batchCustomId(callId), params, signal);
    } catch (e) {
      throw e instanceof LlmError ? e : classify(e);
    }
  }

  /** The call streamed, asked again (with backoff) when a stream breaks off midway. */
  private async streamCall(params: MessageCreateParamsStreaming, options: ChatOptions): Promise<ChatResult> {
    // attempts stopped after message_start were billed: they go with the result or the error
    const stopped: StoppedAttempt[] = [];
    for (let attempt = 1; ; attempt++) {
      const billed = new StreamedUsage();
      try {
        const result = await this.streamOnce(params, options, attempt, billed);
        return stopped.length ? { ...result, stoppedAttempts: stopped } : result;
      } catch (e) {
        const error = classify(e);
        const usage = billed.billed();
        if (usage) stopped.push({ ...usage, cause: isAbort(error) || options.signal?.aborted ? 'aborted' : 'broken' });
        // The SDK retries failed HTTP responses itself; a stream broken off after its 200 (an
        // `overloaded_error` event midway) it does not, so that retry is ours.
        if (!(error instanceof LlmError) || !error.midStream || !error.retryable || attempt > this.opts.maxRetries)
          throw withStoppedAttempts(error, stopped);
        await sleepUnlessAborted(midStreamBackoffMs(attempt), options.signal);
        if (options.signal?.aborted) throw withStoppedAttempts(new Anthropic.APIUserAbortError(), stopped);
      }
    }
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

  private async streamOnce(
    params: MessageCreateParamsStreaming,
    options: ChatOptions,
    attempt: number,
    billed: StreamedUsage,
  ): Promise<ChatResult> {
    const stream = this.client.messages.stream(params, { signal: options.signal });
    stream.on('streamEvent', (event) => billed.see(event));
    if (options.onTextDelta) stream.on('text', (delta) => options.onTextDelta!(delta, attempt));
    return chatResult(await stream.finalMessage());
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

function classify(e: unknown): Error {
  if (e instanceof Anthropic.APIUserAbortError) return e;
  if (e instanceof Anthropic.APIConnectionError) return providerFailure(e.message, 'llm_unreachable', true);
  if (e instanceof Anthropic.APIError) {
    const status = e.status ?? 0;
    if (!status) {
      // an error event after the 200: the status is gone, the error type says what happened
      const type = (e.error as { error?: { type?: string } } | undefined)?.error?.type ?? '';
      const code = RETRYABLE_ERROR_TYPES[type];
      return providerFailure(e.message, code ?? `llm_stream_${type || 'error'}`, code !== undefined, true);
    }
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const code = status === 529 ? 'llm_overloaded' : status === 429 ? 'llm_rate_limited' : `llm_http_${status}`;
    return providerFailure(e.message, code, retryable);
  }
  return e instanceof Error ? e : new Error(String(e));
}

export const isAbort = (e: unknown): boolean =>
  e instanceof Anthropic.APIUserAbortError || (e as Error)?.name === 'AbortError';
