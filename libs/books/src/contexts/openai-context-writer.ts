import { type OpenAiLlm, textsOf } from '@parley/agent';
import type { ContextualConfig } from '@parley/config';
import type { ContextWriter, SituatedPassage } from './context-writer';
import { chatContextRequest } from './contextual-prompt';

/**
 * Contexts written through the Chat Completions API (OpenAI, Azure OpenAI's v1 endpoint, or a
 * compatible server at OPENAI_BASE_URL). The book leads every request, so OpenAI's automatic
 * prompt cache reads it; its `cached_tokens` are recorded as cache reads, as the agent's are. A
 * server that reports no usage is billed by an estimate (the adapter's, 4 characters a token).
 */
export class OpenAiContextWriter implements ContextWriter {
  readonly provider = 'openai';

  constructor(
    private readonly config: ContextualConfig,
    private readonly llm: OpenAiLlm,
  ) {}

  async situate(prefix: string, passage: string): Promise<SituatedPassage> {
    const { messageId, result } = await this.llm.complete(
      chatContextRequest(this.config.model, this.config.maxOutputTokens, prefix, passage),
    );
    return {
      messageId,
      text: textsOf(result).join(' '),
      usage: result.usage,
      stoppedAtMaxTokens: result.stopReason === 'max_tokens',
    };
  }
}
