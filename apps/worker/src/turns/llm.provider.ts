import { Provider } from '@nestjs/common';
import { AnthropicLlm, LLM_CLIENT, LlmClient, ScriptedLlm } from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { MeteredLlm } from '../metrics/metered-llm';
import { WorkerMetrics } from '../metrics/worker-metrics';

export const llmProvider: Provider = {
  provide: LLM_CLIENT,
  inject: [CONFIG, WorkerMetrics],
  useFactory: ({ llm, tracing }: AppConfig, metrics: WorkerMetrics): LlmClient => {
    const client =
      llm.provider === 'anthropic'
        ? new AnthropicLlm({
            model: llm.model,
            maxTokens: llm.maxTokens,
            maxRetries: llm.maxRetries,
            apiKey: llm.apiKey,
            baseUrl: llm.baseUrl,
            captureContent: tracing?.captureContent ?? false,
          })
        : new ScriptedLlm();
    return new MeteredLlm(client, client instanceof ScriptedLlm ? client.model : llm.model, metrics);
  },
};
