import { Provider } from '@nestjs/common';
import { AnthropicLlm, LLM_CLIENT, LlmClient, ScriptedLlm } from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';

export const llmProvider: Provider = {
  provide: LLM_CLIENT,
  inject: [CONFIG],
  useFactory: ({ llm, tracing }: AppConfig): LlmClient =>
    llm.provider === 'anthropic'
      ? new AnthropicLlm({
          model: llm.model,
          maxTokens: llm.maxTokens,
          maxRetries: llm.maxRetries,
          apiKey: llm.apiKey,
          baseUrl: llm.baseUrl,
          captureContent: tracing?.captureContent ?? false,
        })
      : new ScriptedLlm(),
};
