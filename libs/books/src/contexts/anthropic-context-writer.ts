import Anthropic from '@anthropic-ai/sdk';
import { toUsage } from '@parley/agent';
import type { ContextualConfig } from '@parley/config';
import type { ContextWriter, SituatedPassage } from './context-writer';
import { contextRequest } from './contextual-prompt';

/** Contexts written through Anthropic's Messages API, the book behind a cache breakpoint. */
export class AnthropicContextWriter implements ContextWriter {
  readonly provider = 'anthropic';

  constructor(
    private readonly config: ContextualConfig,
    private readonly client = new Anthropic({
      apiKey: config.anthropic.apiKey,
      baseURL: config.anthropic.baseUrl,
      maxRetries: config.maxRetries,
      timeout: config.timeoutMs,
    }),
  ) {}

  async situate(prefix: string, passage: string): Promise<SituatedPassage> {
    const reply = await this.client.messages.create(
      contextRequest(this.config.model, this.config.maxOutputTokens, prefix, passage),
    );
    return {
      messageId: reply.id,
      text: reply.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(' '),
      usage: toUsage(reply.usage),
      stoppedAtMaxTokens: reply.stop_reason === 'max_tokens',
    };
  }
}
