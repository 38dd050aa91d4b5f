import { z } from 'zod';
import { ConfigError, Env } from './env';
import { parseJsonSetting } from './json-setting';

/** A provider Parley talks to over the network (the scripted stand-in is none). */
export type LlmProviderName = 'anthropic' | 'openai';

/**
 * One model's entry of LLM_PRICES: its provider and its list price in USD per million tokens
 * (`cachedInput`: a cache read, `cacheWrite`: a 5-minute cache write); `tools: false` for a model
 * known to answer without tool use (it runs the always-retrieve plan).
 */
export interface ModelPriceEntry {
  provider: LlmProviderName;
  input: number;
  output: number;
  cachedInput?: number;
  cacheWrite?: number;
  tools?: boolean;
}

const usd = z.number({ error: 'must be a number of USD per million tokens' }).min(0, 'must be 0 or more');

const priceEntry = z
  .object({
    provider: z.enum(['openai', 'anthropic'], { error: 'must be "openai" or "anthropic"' }),
    input: usd,
    output: usd,
    cachedInput: usd.optional(),
    cacheWrite: usd.optional(),
    tools: z.boolean().optional(),
  })
  .strict();

/** Model ids, or explicit patterns with `*` (any run of characters): nothing else matches loosely. */
const priceTable = z.record(
  z.string().regex(/^[^\s]+$/, 'a model id (or a pattern with *) without spaces'),
  priceEntry,
);

export interface LlmConfig {
  /** the provider of LLM_MODEL, and of every call when `scripted` */
  provider: LlmProviderName | 'scripted';
  /** the providers this deployment talks to (LLM_PROVIDERS); none with the scripted stand-in */
  providers: LlmProviderName[];
  model: string;
  /** the model that writes history summaries (LLM_SUMMARY_MODEL); unset: the turn's own */
  summaryModel?: string;
  /** the models a conversation's policy may name (POLICY_MODELS): ids, or '*' for any priced model; unset: LLM_MODEL alone */
  policyModels: string[] | '*';
  maxTokens: number;
  maxRetries: number;
  apiKey?: string;
  baseUrl?: string;
  /** the Chat Completions API: OpenAI's, or a compatible server's (OPENAI_BASE_URL) */
  openai: { apiKey?: string; baseUrl?: string };
  /** the operator's price table (LLM_PRICES), merged over the shipped one at boot */
  prices: Record<string, ModelPriceEntry>;
  retrievalMode: Env['LLM_RETRIEVAL_MODE'];
  /** whole-book retrieval: the largest book `auto` sends whole, and how long its cache entry lives */
  wholeBook: { maxTokens: number; cacheTtl: '5m' | '1h' };
  /** always-retrieve also searches with a hypothetical answer passage the model writes (HyDE) */
  hyde: boolean;
  /** how often a turn waiting on a Message Batches API batch looks at it */
  batchPollMs: number;
}

export function llmConfig(e: Env): LlmConfig {
  const provider = e.LLM_PROVIDER ?? (e.ANTHROPIC_API_KEY ? 'anthropic' : 'scripted');
  const providers = providersOf(e, provider);
  if (providers.includes('openai') && !e.OPENAI_API_KEY && !e.OPENAI_BASE_URL)
    throw new ConfigError(
      'Invalid environment:\n  OPENAI_API_KEY: required with the openai provider unless OPENAI_BASE_URL names a self-hosted server',
    );
  return {
    provider,
    providers,
    model: e.LLM_MODEL,
    summaryModel: e.LLM_SUMMARY_MODEL,
    policyModels: policyModelsOf(e),
    maxTokens: e.LLM_MAX_TOKENS,
    maxRetries: e.LLM_MAX_RETRIES,
    apiKey: e.ANTHROPIC_API_KEY,
    baseUrl: e.ANTHROPIC_BASE_URL,
    openai: { apiKey: e.OPENAI_API_KEY, baseUrl: e.OPENAI_BASE_URL },
    prices: e.LLM_PRICES ? parsePrices(e.LLM_PRICES) : {},
    retrievalMode: e.LLM_RETRIEVAL_MODE,
    wholeBook: { maxTokens: e.WHOLE_BOOK_MAX_TOKENS, cacheTtl: e.WHOLE_BOOK_CACHE_TTL },
    hyde: e.RETRIEVAL_HYDE ? e.RETRIEVAL_HYDE === 'true' : provider === 'anthropic',
    batchPollMs: e.LLM_BATCH_POLL_MS,
  };
}

/** POLICY_MODELS: '*', or its ids without repeats; unset: LLM_MODEL alone (a reader picks nothing dearer than the operator did). */
function policyModelsOf(e: Env): string[] | '*' {
  const listed = e.POLICY_MODELS?.trim();
  if (listed === '*') return '*';
  return listed ? [...new Set(listed.split(',').map((m) => m.trim()))] : [e.LLM_MODEL];
}

/** LLM_PROVIDERS, which must hold LLM_PROVIDER; unset: LLM_PROVIDER alone. */
function providersOf(e: Env, provider: LlmConfig['provider']): LlmProviderName[] {
  if (!e.LLM_PROVIDERS) return provider === 'scripted' ? [] : [provider];
  const named = [...new Set(e.LLM_PROVIDERS.split(',').map((p) => p.trim() as LlmProviderName))];
  if (provider !== 'scripted' && !named.includes(provider))
    throw new ConfigError(`Invalid environment:\n  LLM_PROVIDERS: must name LLM_PROVIDER (${provider})`);
  return provider === 'scripted' ? [] : named;
}

/**
 * LLM_PRICES: a JSON object, or the path of a file holding one. Anything malformed stops boot,
 * so that no model is ever priced by a table the operator did not mean.
 */
export function parsePrices(raw: string): Record<string, ModelPriceEntry> {
  return parseJsonSetting('LLM_PRICES', raw, priceTable);
}
