import { randomBytes } from 'node:crypto';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import { Usage } from '@parley/conversation';
import { ChatResult, StoppedAttempt } from './llm.types';

/** Characters per token, for the estimate of a call whose usage never came. */
const CHARS_PER_TOKEN = 4;

/** finish_reason in the Anthropic terms the rest of Parley reads. */
const STOP_REASONS: Record<string, string> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
};

/** A finish_reason as the stop reason Parley records (none said: the model stopped of itself). */
export const stopReasonOf = (finishReason: string | undefined): string =>
  STOP_REASONS[finishReason ?? 'stop'] ?? finishReason!;

/**
 * One streamed Chat Completions attempt put together chunk by chunk: the text, the tool calls
 * (their arguments arrive in pieces, by index), the finish reason and, in the last chunk, the
 * usage. What it had cost when it stopped is `billed()`: the usage if it came, else an estimate.
 */
export class ChatCompletionStreamed {
  private id?: string;
  private responseModel?: string;
  private text = '';
  private readonly calls: Array<{ id?: string; name: string; args: string }> = [];
  private finishReason?: string;
  private usage?: CompletionUsage;

  constructor(
    /** the model asked for: the one the call is priced by */
    private readonly model: string,
    /** the request's length in characters, for an estimate of its input tokens */
    private readonly requestChars: number,
  ) {}

  /** Takes a chunk; returns the text it adds, if any. */
  see(chunk: ChatCompletionChunk): string {
    this.id ??= chunk.id;
    this.responseModel ??= chunk.model;
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return '';
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    for (const d of choice.delta?.tool_calls ?? []) {
      const call = (this.calls[d.index] ??= { name: '', args: '' });
      if (d.id) call.id = d.id;
      if (d.function?.name) call.name += d.function.name;
      if (d.function?.arguments) call.args += d.function.arguments;
    }
    const delta = choice.delta?.content ?? '';
    this.text += delta;
    return delta;
  }

  /** Whether the model said why it stopped: a stream that ends before that was cut off. */
  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  result(): ChatResult {
    const content: ChatResult['content'] = [
      ...(this.text ? [{ type: 'text' as const, text: this.text }] : []),
      ...this.calls
        .filter((c) => c !== undefined)
        .map((c) => ({
          type: 'tool_use' as const,
          id: c.id || newCallId(),
          name: c.name,
          input: parseArguments(c.args),
        })),
    ];
    const stopReason = this.calls.length > 0 ? 'tool_use' : stopReasonOf(this.finishReason);
    return {
      content,
      stopReason,
      usage: this.billedUsage().usage,
      model: this.model,
      ...(this.responseModel && this.responseModel !== this.model ? { responseModel: this.responseModel } : {}),
    };
  }

  /** What the attempt was billed; undefined before its first chunk (a refused call costs nothing). */
  billed(cause: StoppedAttempt['cause']): StoppedAttempt | undefined {
    if (!this.id) return undefined;
    const { usage, estimated } = this.billedUsage();
    return { messageId: this.id, model: this.model, usage, cause, ...(estimated ? { estimated: true } : {}) };
  }

  private billedUsage(): { usage: Usage; estimated: boolean } {
    if (this.usage) return { usage: chatCompletionUsage(this.usage), estimated: false };
    const written =
      this.text.length + this.calls.reduce((n, c) => n + (c?.name.length ?? 0) + (c?.args.length ?? 0), 0);
    return {
      usage: {
        inputTokens: Math.ceil(this.requestChars / CHARS_PER_TOKEN),
        outputTokens: Math.ceil(written / CHARS_PER_TOKEN),
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
      },
      estimated: true,
    };
  }
}

/**
 * Chat Completions usage in Parley's terms: `prompt_tokens` counts the cached tokens too, so
 * those are taken out of the input and counted as cache reads (OpenAI bills no cache writes).
 */
export function chatCompletionUsage(u: CompletionUsage): Usage {
  const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    inputTokens: Math.max(0, (u.prompt_tokens ?? 0) - cached),
    outputTokens: u.completion_tokens ?? 0,
    cacheReadInputTokens: cached,
    cacheCreationInputTokens: 0,
  };
}

/** The call's arguments as JSON; arguments a model garbled go to the tool as they are, which refuses them. */
function parseArguments(args: string): unknown {
  if (!args.trim()) return {};
  try {
    return JSON.parse(args);
  } catch {
    return { unparsedArguments: args };
  }
}

/** Some compatible servers stream a tool call without an id: it still needs one to be answered by. */
function newCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}
