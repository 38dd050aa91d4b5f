import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { Usage } from '@parley/conversation';

/** Characters per output token, for the estimate of a stream stopped before its message_delta. */
const CHARS_PER_TOKEN = 4;

/** What the provider billed for one streamed attempt, so far. */
export interface BilledSoFar {
  /** the provider's id of the message (`msg_…`) */
  messageId: string;
  model: string;
  usage: Usage;
}

/**
 * Follows one streamed attempt's events for what it has been billed: the input counted in
 * message_start, and the output written until the stream ends or stops.
 */
export class StreamedUsage {
  private start?: BilledSoFar;
  private delta?: { output_tokens: number; input_tokens: number | null };
  private streamedChars = 0;

  see(event: RawMessageStreamEvent): void {
    if (event.type === 'message_start') {
      const u = event.message.usage;
      this.start = {
        messageId: event.message.id,
        model: event.message.model,
        usage: {
          inputTokens: u.input_tokens ?? 0,
          outputTokens: u.output_tokens ?? 0,
          cacheReadInputTokens: u.cache_read_input_tokens ?? 0,
          cacheCreationInputTokens: u.cache_creation_input_tokens ?? 0,
        },
      };
    } else if (event.type === 'content_block_delta') {
      const d = event.delta;
      this.streamedChars +=
        d.type === 'text_delta'
          ? d.text.length
          : d.type === 'input_json_delta'
            ? d.partial_json.length
            : d.type === 'thinking_delta'
              ? d.thinking.length
              : 0;
    } else if (event.type === 'message_delta') {
      this.delta = event.usage;
    }
  }

  /** Undefined before message_start: a call refused or cut before it is billed nothing. */
  billed(): BilledSoFar | undefined {
    if (!this.start) return undefined;
    const { usage } = this.start;
    // output: the latest message_delta's count if one came, else estimated from the text streamed (at least message_start's)
    const outputTokens =
      this.delta?.output_tokens ?? Math.max(usage.outputTokens, Math.ceil(this.streamedChars / CHARS_PER_TOKEN));
    return {
      ...this.start,
      usage: { ...usage, inputTokens: this.delta?.input_tokens ?? usage.inputTokens, outputTokens },
    };
  }
}
