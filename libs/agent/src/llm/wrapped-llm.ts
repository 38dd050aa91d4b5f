import { ChatOptions, ChatOutcome, DocumentSupport, LlmClient, LlmMessage, LlmToolSpec } from './llm.types';

/**
 * A client that wraps another to add one concern around its calls (metering, budgets): the
 * capabilities are the wrapped client's, asked per model as the wrapped one answers them, so each
 * wrapper writes only its `chatWithTools`.
 */
export abstract class WrappedLlm implements LlmClient {
  readonly provider: string;
  readonly supportsTools: boolean;
  readonly supportsBatches: boolean;
  readonly documents?: DocumentSupport;

  constructor(protected readonly inner: LlmClient) {
    this.provider = inner.provider;
    this.supportsTools = inner.supportsTools;
    this.supportsBatches = inner.supportsBatches;
    this.documents = inner.documents;
  }

  supportsToolsFor(model: string | undefined): boolean {
    return this.inner.supportsToolsFor?.(model) ?? this.supportsTools;
  }

  documentsFor(model: string | undefined): DocumentSupport | undefined {
    return this.inner.documentsFor?.(model) ?? this.documents;
  }

  providerFor(model: string | undefined): string {
    return this.inner.providerFor?.(model) ?? this.provider;
  }

  abstract chatWithTools(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatOutcome>;
}
