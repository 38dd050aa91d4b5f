import { AppConfig, toAppConfig } from './app-config';
import { authConfig } from './auth-config';
import {
  bookLimits,
  BookLimits,
  contextualConfig,
  ContextualConfig,
  embeddingsConfig,
  EmbeddingsConfig,
} from './books-config';
import { parseEnv, parseTracingEnv } from './env';
import { ModelPriceEntry, parsePrices } from './llm-config';
import { tracingConfig, TracingConfig } from './tracing-config';

export { AppConfig, RateLimitsPerMinute } from './app-config';
export { DEV_JWT_SECRET } from './auth-config';
export { BookLimits, ContextualConfig, EmbeddingsConfig } from './books-config';
export { ConfigError, Env } from './env';
export { LlmConfig, LlmProviderName, ModelPriceEntry, parsePrices } from './llm-config';
export { RedisNode, RedisTopology } from './redis-topology';
export { TracingConfig } from './tracing-config';
export { CorsConfig, WebhooksConfig } from './integrations-config';
export { ToolServerConfig, ToolServersConfig, toolNeedsApproval } from './tool-servers-config';
export * from './tool-names';

/**
 * The tracing settings alone, read before anything else is loaded (tracing must patch modules
 * before they are required); the rest of the environment is validated when the app boots.
 */
export function loadTracingConfig(source: NodeJS.ProcessEnv = process.env): TracingConfig | null {
  return tracingConfig(parseTracingEnv(source));
}

/** The contextual retrieval settings alone (null: off), for the CLI and the benchmark. */
export function loadContextualConfig(source: NodeJS.ProcessEnv = process.env): ContextualConfig | null {
  return contextualConfig(parseEnv(source));
}

/** LLM_PRICES alone ({} when unset), for the CLI and the benchmark, which price contextual retrieval's calls. */
export function loadLlmPrices(source: NodeJS.ProcessEnv = process.env): Record<string, ModelPriceEntry> {
  const raw = parseEnv(source).LLM_PRICES;
  return raw ? parsePrices(raw) : {};
}

/** The embeddings settings alone, for the CLI's `embeddings reembed` (which needs no JWT secret). */
export function loadEmbeddingsConfig(source: NodeJS.ProcessEnv = process.env): EmbeddingsConfig {
  return embeddingsConfig(parseEnv(source));
}

/** The book limits alone, for the CLI (which needs no JWT secret). */
export function loadBookLimits(source: NodeJS.ProcessEnv = process.env): BookLimits {
  return bookLimits(parseEnv(source));
}

/** BUDGET_USD_PER_MONTH alone (null: none), for the CLI's contextual retrieval, which spends the uploader's budget. */
export function loadBudgetUsdPerMonth(source: NodeJS.ProcessEnv = process.env): number | null {
  return parseEnv(source).BUDGET_USD_PER_MONTH ?? null;
}

/**
 * TRUST_PROXY alone (false: trust no peer), for the API's HTTP adapter, which is built before the
 * app's config is injected.
 */
export function loadTrustProxy(source: NodeJS.ProcessEnv = process.env): AppConfig['trustProxy'] {
  return parseEnv(source).TRUST_PROXY ?? false;
}

/** DATABASE_URL alone, for tools that only talk to Postgres (migrate, CLI): they need no JWT secret. */
export function loadDatabaseUrl(source: NodeJS.ProcessEnv = process.env): string {
  return parseEnv(source).DATABASE_URL;
}

/** DATABASE_URL and ERASURE_JOURNAL_URL (null: unset, the journal is beside DATABASE_URL), for the CLI's `erasures replay`. */
export function loadErasureJournalTarget(source: NodeJS.ProcessEnv = process.env): {
  databaseUrl: string;
  journalUrl: string | null;
} {
  const e = parseEnv(source);
  return { databaseUrl: e.DATABASE_URL, journalUrl: e.ERASURE_JOURNAL_URL ?? null };
}

export function loadConfig(source: NodeJS.ProcessEnv = process.env): AppConfig {
  const e = parseEnv(source);
  return toAppConfig(e, authConfig(e));
}
