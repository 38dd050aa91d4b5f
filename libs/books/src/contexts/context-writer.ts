import { AnthropicLlm, OpenAiLlm, type PriceTable, type ProviderClientOptions } from '@parley/agent';
import { ConfigError, type ContextualConfig } from '@parley/config';
import type { Usage } from '@parley/conversation';
import { AnthropicContextWriter } from './anthropic-context-writer';
import type { ContextProvider } from './contextual-prompt';
import { OpenAiContextWriter } from './openai-context-writer';

/** One passage situated: the model's answer and what the call was billed. */
export interface SituatedPassage {
  /** the provider's id of the call, the ledger line's key */
  messageId: string;
  text: string;
  usage: Usage;
  /** the model stopped at CONTEXTUAL_MAX_OUTPUT_TOKENS */
  stoppedAtMaxTokens: boolean;
}

/**
 * The model call of contextual retrieval, one implementation per provider: the context of
 * `passage` within the book `prefix`, which is the same for every passage of a book so that the
 * provider's prompt cache reads it. Each goes through its provider's adapter (AnthropicLlm,
 * OpenAiLlm), as the agent's calls do: its span, its SDK's retries, its errors as LlmErrors,
 * thrown once the retries are spent.
 */
export interface ContextWriter {
  readonly provider: ContextProvider;
  situate(prefix: string, passage: string): Promise<SituatedPassage>;
}

/**
 * The provider CONTEXTUAL_MODEL runs on, by its entry in the price table, with that provider's
 * credentials checked. A model the table does not name is taken for Anthropic's (as before
 * models had providers) and its calls are recorded at $0 with a warning.
 */
export function contextProviderOf(config: ContextualConfig, table: PriceTable): ContextProvider {
  const model = config.model;
  const provider = table.providerOf(model) ?? 'anthropic';
  const refusal = (line: string) => new ConfigError(`Invalid environment:\n  ${line}`);
  if (provider === 'openai') {
    if (!config.openai.apiKey && !config.openai.baseUrl)
      throw refusal(
        `OPENAI_API_KEY: required with CONTEXTUAL_RETRIEVAL=true and CONTEXTUAL_MODEL ${model}, an openai model in the price table, unless OPENAI_BASE_URL names a self-hosted server`,
      );
    return provider;
  }
  if (provider !== 'anthropic')
    throw refusal(
      `CONTEXTUAL_MODEL: model ${model} runs on ${provider}, which cannot write contexts (name an anthropic or openai model of the price table)`,
    );
  if (!config.anthropic.apiKey)
    throw refusal(
      table.providerOf(model)
        ? `ANTHROPIC_API_KEY: required with CONTEXTUAL_RETRIEVAL=true and CONTEXTUAL_MODEL ${model}, an anthropic model in the price table`
        : `ANTHROPIC_API_KEY: required with CONTEXTUAL_RETRIEVAL=true: CONTEXTUAL_MODEL ${model} is not in the price table, so it is taken for an anthropic model (LLM_PRICES names its provider)`,
    );
  return provider;
}

/**
 * The adapter's settings for contextual retrieval: CONTEXTUAL_MODEL, its output limit, retries
 * and timeout, with the provider's key and address (`access`).
 */
export function contextClientOptions(
  config: ContextualConfig,
  access: { apiKey?: string; baseUrl?: string },
): ProviderClientOptions {
  return {
    model: config.model,
    maxTokens: config.maxOutputTokens,
    maxRetries: config.maxRetries,
    timeoutMs: config.timeoutMs,
    apiKey: access.apiKey,
    baseUrl: access.baseUrl,
  };
}

/** The writer for CONTEXTUAL_MODEL's provider (ConfigError when it cannot be called; see contextProviderOf). */
export function contextWriterFor(config: ContextualConfig, table: PriceTable): ContextWriter {
  return contextProviderOf(config, table) === 'openai'
    ? new OpenAiContextWriter(config, new OpenAiLlm(contextClientOptions(config, config.openai)))
    : new AnthropicContextWriter(config, new AnthropicLlm(contextClientOptions(config, config.anthropic)));
}
