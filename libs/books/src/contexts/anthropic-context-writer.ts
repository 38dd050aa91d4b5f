import { type AnthropicLlm, textsOf } from '@parley/agent';
import type { ContextualConfig } from '@parley/config';
import type { ContextWriter, SituatedPassage } from './context-writer';
import { contextRequest } from './contextual-prompt';

/** Contexts written through Anthropic's Messages API, the book behind a cache breakpoint. */
export class AnthropicContextWriter implements ContextWriter {
  readonly provider = 'anthropic';

  constructor(
    private readonly config: ContextualConfig,
    private readonly llm: AnthropicLlm,
  ) {}

  async situate(prefix: string, passage: string): Promise<SituatedPassage> {
    const { messageId, result } = await this.llm.complete(
      contextRequest(this.config.model, this.config.maxOutputTokens, prefix, passage),
    );
    return {
      messageId,
      text: textsOf(result).join(' '),
      usage: result.usage,
      stoppedAtMaxTokens: result.stopReason === 'max_tokens',
    };
  }
}
