import { ConfigError, Env } from './env';

/** Contextual retrieval: the model that writes each passage's context, and how it is called. */
export interface ContextualConfig {
  model: string;
  /**
   * Both providers' credentials: the model's entry in the price table says which one it runs on,
   * and that one's key is required when contextual retrieval starts (libs/books context-writer.ts).
   */
  anthropic: { apiKey?: string; baseUrl?: string };
  /** the Chat Completions API: OpenAI's, or a compatible server's (OPENAI_BASE_URL) */
  openai: { apiKey?: string; baseUrl?: string };
  /** requests in flight at once, after the first (which writes the book to the cache alone) */
  concurrency: number;
  /** the SDK's retries of 429, 5xx and 529 (with its backoff) before a passage counts as failed */
  maxRetries: number;
  /** the cached book prefix is cut to this many tokens (the model's window, less room for the rest) */
  maxBookTokens: number;
  maxOutputTokens: number;
  timeoutMs: number;
}

/** Which embeddings API (if any) search uses beside full text, and how it is called. */
export interface EmbeddingsConfig {
  /** none: search is full text only */
  provider: 'none' | 'voyage' | 'openai';
  /** stored with every vector: a change of model means re-embedding (`npm run cli -- embeddings reembed`) */
  model: string;
  apiKey?: string;
  /** the API's origin; defaults to https://api.voyageai.com or https://api.openai.com */
  baseUrl?: string;
  /** the vectors' length asked of the provider (null: the model's own) */
  dimensions: number | null;
  /** most texts per request (the provider's own limits on inputs and tokens also apply) */
  batchSize: number;
  timeoutMs: number;
  maxRetries: number;
}

/** What a book upload may cost: the parser's bounds and how many ingestions run at once. */
export interface BookLimits {
  /** extracted text (and inflated PDF streams) may be at most this many times the upload… */
  maxExpansionRatio: number;
  /** …and at most this many bytes, whichever is lower */
  maxExpandedBytes: number;
  maxPages: number;
  /** the parser process's V8 heap (--max-old-space-size) */
  parseHeapMb: number;
  /** the parser process is killed when its resident memory passes this (buffers are off-heap) */
  parseMaxRssMb: number;
  parseTimeoutMs: number;
  /** ingestions queued or running per user, and over the whole service (more get 429) */
  ingestPerUser: number;
  ingestGlobal: number;
  /** book-ingest jobs one worker process runs at once */
  ingestConcurrency: number;
  /** whether this worker takes book-ingest jobs (independent of AGENT_ENABLED) */
  ingestEnabled: boolean;
}

export function bookLimits(e: Env): BookLimits {
  return {
    maxExpansionRatio: e.BOOK_MAX_EXPANSION_RATIO,
    maxExpandedBytes: e.BOOK_MAX_EXPANDED_MB * 1024 * 1024,
    maxPages: e.BOOK_MAX_PAGES,
    parseHeapMb: e.BOOK_PARSE_HEAP_MB,
    parseMaxRssMb: e.BOOK_PARSE_MAX_RSS_MB,
    parseTimeoutMs: e.BOOK_PARSE_TIMEOUT_MS,
    ingestPerUser: e.BOOK_INGEST_PER_USER,
    ingestGlobal: e.BOOK_INGEST_GLOBAL,
    ingestConcurrency: e.BOOK_INGEST_CONCURRENCY,
    ingestEnabled: e.BOOK_INGEST_ENABLED,
  };
}

const DEFAULT_MODELS = { none: '', voyage: 'voyage-3.5', openai: 'text-embedding-3-small' } as const;

export function embeddingsConfig(e: Env): EmbeddingsConfig {
  if (e.EMBEDDINGS_PROVIDER === 'voyage' && !e.EMBEDDINGS_API_KEY)
    throw new ConfigError('Invalid environment:\n  EMBEDDINGS_API_KEY: required with EMBEDDINGS_PROVIDER=voyage');
  if (e.EMBEDDINGS_PROVIDER === 'openai' && !e.EMBEDDINGS_API_KEY && !e.EMBEDDINGS_BASE_URL)
    throw new ConfigError(
      'Invalid environment:\n  EMBEDDINGS_API_KEY: required with EMBEDDINGS_PROVIDER=openai unless EMBEDDINGS_BASE_URL names a self-hosted server',
    );
  return {
    provider: e.EMBEDDINGS_PROVIDER,
    model: e.EMBEDDINGS_MODEL ?? DEFAULT_MODELS[e.EMBEDDINGS_PROVIDER],
    apiKey: e.EMBEDDINGS_API_KEY,
    baseUrl: e.EMBEDDINGS_BASE_URL,
    dimensions: e.EMBEDDINGS_DIMENSIONS ?? null,
    batchSize: e.EMBEDDINGS_BATCH_SIZE,
    timeoutMs: e.EMBEDDINGS_TIMEOUT_MS,
    maxRetries: e.EMBEDDINGS_MAX_RETRIES,
  };
}

export function contextualConfig(e: Env): ContextualConfig | null {
  if (!e.CONTEXTUAL_RETRIEVAL) return null;
  return {
    model: e.CONTEXTUAL_MODEL,
    anthropic: { apiKey: e.ANTHROPIC_API_KEY, baseUrl: e.ANTHROPIC_BASE_URL },
    openai: { apiKey: e.OPENAI_API_KEY, baseUrl: e.OPENAI_BASE_URL },
    concurrency: e.CONTEXTUAL_CONCURRENCY,
    maxRetries: e.CONTEXTUAL_MAX_RETRIES,
    maxBookTokens: e.CONTEXTUAL_MAX_BOOK_TOKENS,
    maxOutputTokens: e.CONTEXTUAL_MAX_OUTPUT_TOKENS,
    timeoutMs: e.CONTEXTUAL_TIMEOUT_MS,
  };
}
