import { ChatOptions, ChatOutcome, LlmClient, LlmMessage, LlmToolSpec, ModelCapabilities } from './llm.types';

/**
 * A client that wraps another to add one concern around its calls (metering, budgets): the
 * capabilities are the wrapped client's, asked per model as the wrapped one answers them, so each
 * wrapper writes only its `chatWithTools`.
 */
export abstract class WrappedLlm implements LlmClient {
  readonly everyModelTakesTools: boolean;

  constructor(protected readonly inner: LlmClient) {
    this.everyModelTakesTools = inner.everyModelTakesTools;
  }

  capabilitiesOf(model: string | undefined): ModelCapabilities {
    return this.inner.capabilitiesOf(model);
  }

  abstract chatWithTools(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatOutcome>;
}
