import { Logger, Provider } from '@nestjs/common';
import {
  AnthropicLlm,
  LLM_CLIENT,
  LlmClient,
  MODEL_TABLE,
  ModelToolSupport,
  OpenAiLlm,
  openAiBaseUrlWarning,
  PriceTable,
  ProviderRouter,
  ScriptedLlm,
} from '@parley/agent';
import { AppConfig, CONFIG, LlmProviderName } from '@parley/config';
import { Pool } from 'pg';
import { MeteredLlm } from '../metrics/metered-llm';
import { WorkerMetrics } from '../metrics/worker-metrics';

/**
 * The worker's model client: the scripted stand-in, or each provider of LLM_PROVIDERS behind one
 * router that sends a call to its model's provider (docs/providers.md); measured either way.
 */
export const llmProvider: Provider = {
  provide: LLM_CLIENT,
  inject: [CONFIG, WorkerMetrics, Pool, MODEL_TABLE],
  useFactory: async (config: AppConfig, metrics: WorkerMetrics, pool: Pool, table: PriceTable): Promise<LlmClient> => {
    const { llm } = config;
    if (llm.provider === 'scripted') {
      const scripted = new ScriptedLlm();
      return new MeteredLlm(scripted, scripted.model, metrics);
    }
    const toolSupport = new ModelToolSupport(pool, table);
    await toolSupport.load();
    const clients = new Map(llm.providers.map((p) => [p, providerClient(p, config)] as const));
    const router = new ProviderRouter(clients, { provider: llm.provider, model: llm.model }, table, toolSupport);
    return new MeteredLlm(router, llm.model, metrics);
  },
};

function providerClient(provider: LlmProviderName, { llm, tracing }: AppConfig): LlmClient {
  const common = {
    model: llm.model,
    maxTokens: llm.maxTokens,
    maxRetries: llm.maxRetries,
    captureContent: tracing?.captureContent ?? false,
  };
  if (provider === 'anthropic') return new AnthropicLlm({ ...common, apiKey: llm.apiKey, baseUrl: llm.baseUrl });
  const warning = openAiBaseUrlWarning(llm.openai.baseUrl);
  if (warning) new Logger('LlmProvider').warn(warning);
  return new OpenAiLlm({ ...common, apiKey: llm.openai.apiKey, baseUrl: llm.openai.baseUrl });
}
