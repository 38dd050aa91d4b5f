import OpenAI from 'openai';
import { Logger } from '@nestjs/common';
import { chatCompletionUsage } from '@parley/agent';
import type { ContextualConfig } from '@parley/config';
import type { ContextWriter, SituatedPassage } from './context-writer';
import { chatContextRequest, tokensOf } from './contextual-prompt';

/**
 * Contexts written through the Chat Completions API (OpenAI, Azure OpenAI's v1 endpoint, or a
 * compatible server at OPENAI_BASE_URL). The book leads every request, so OpenAI's automatic
 * prompt cache reads it; its `cached_tokens` are recorded as cache reads, as the agent's are.
 */
export class OpenAiContextWriter implements ContextWriter {
  readonly provider = 'openai';
  private readonly logger = new Logger(OpenAiContextWriter.name);
  private warnedNoUsage = false;

  constructor(
    private readonly config: ContextualConfig,
    private readonly client = new OpenAI({
      // a self-hosted server takes no key, the SDK wants one all the same
      apiKey: config.openai.apiKey ?? 'no-key',
      baseURL: config.openai.baseUrl,
      maxRetries: config.maxRetries,
      timeout: config.timeoutMs,
    }),
  ) {}

  async situate(prefix: string, passage: string): Promise<SituatedPassage> {
    const request = chatContextRequest(this.config.model, this.config.maxOutputTokens, prefix, passage);
    const reply = await this.client.chat.completions.create(request);
    const choice = reply.choices[0];
    const text = choice?.message.content ?? '';
    return {
      messageId: reply.id,
      text,
      usage: reply.usage ? chatCompletionUsage(reply.usage) : this.estimatedUsage(request, text),
      stoppedAtMaxTokens: choice?.finish_reason === 'length',
    };
  }

  /** A server that reports no usage is billed by the characters sent and received, not as free. */
  private estimatedUsage(request: ReturnType<typeof chatContextRequest>, text: string) {
    if (!this.warnedNoUsage) {
      this.warnedNoUsage = true;
      this.logger.warn(
        `${this.config.model}: the server reported no usage; contexts are billed by an estimate at 4 characters a token`,
      );
    }
    return {
      inputTokens: tokensOf(JSON.stringify(request.messages).length),
      outputTokens: tokensOf(text.length),
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    };
  }
}
