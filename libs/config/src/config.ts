import { z } from 'zod';

/**
 * The one env schema (docs/configuration.md), validated once at boot. Nothing else reads process.env:
 * everything gets this typed object injected.
 */
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const positiveInt = z.coerce.number().int().positive();
/** First path segments the API's own routes use: the queue board must not shadow them. */
const RESERVED_ROOTS = ['v1', 'docs', 'docs-json', 'docs-yaml', 'web', 'healthz', 'readyz', 'metrics', 'problems'];
const HOST_PORT_LIST = /^\s*[^\s,:]+:\d{1,5}\s*(,\s*[^\s,:]+:\d{1,5}\s*)*$/;

/**
 * OpenTelemetry's standard variables, the ones Parley decides by: whether tracing starts at all
 * (the endpoint) and how it exports. The SDK reads the rest itself (OTEL_TRACES_SAMPLER, OTEL_BSP_*).
 */
const tracingSchema = z.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/protobuf', 'http/json']).default('http/protobuf'),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: bool.default(false),
});

const envSchema = tracingSchema.extend({
  // unset means production: only an explicit development may use the public DEV_JWT_SECRET
  NODE_ENV: z.enum(['development', 'production', 'test']).default('production'),
  DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/parley'),
  DATABASE_READ_URL: z.string().url().optional(),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER_NODES: z.string().regex(HOST_PORT_LIST, 'host:port,host:port,...').optional(),
  REDIS_SENTINELS: z.string().regex(HOST_PORT_LIST, 'host:port,host:port,...').optional(),
  REDIS_SENTINEL_NAME: z.string().min(1).default('mymaster'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LLM_PROVIDER: z.enum(['anthropic', 'scripted']).optional(),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: z.string().url().optional(),
  LLM_MODEL: z.string().min(1).default('claude-sonnet-5-5'),
  LLM_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
  LLM_MAX_TOKENS: positiveInt.default(1024),
  LLM_RETRIEVAL_MODE: z.enum(['auto', 'tools', 'always-retrieve']).default('auto'),
  RETRIEVAL_HYDE: z.enum(['true', 'false']).optional(),
  /** how often a turn waiting on a provider's Message Batches API looks at its batch */
  LLM_BATCH_POLL_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  AUTH_JWT_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  // an identity provider's signing keys: RS256/ES256 tokens are verified against them
  AUTH_JWKS_URL: z.string().url().optional(),
  AUTH_ISSUER: z.string().min(1).optional(),
  AUTH_AUDIENCE: z.string().min(1).optional(),
  AUTH_JWKS_COOLDOWN_MS: z.coerce.number().int().min(0).default(30_000),
  WORKER_CONCURRENCY: positiveInt.default(16),
  WORKER_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(30_000),
  // each worker's Prometheus /metrics; unset: no port (the worker stays without HTTP)
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  DB_OUTAGE_MAX_MS: positiveInt.default(300_000),
  ERASURE_SWEEP_MS: positiveInt.default(5_000),
  AGENT_MAX_ITERATIONS: positiveInt.default(5),
  AGENT_CONTEXT_TOKENS: positiveInt.default(60_000),
  QUEUE_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9_-]+$/, 'letters, digits, _ and - only')
    .default('parley'),
  // the operators' queue board (docs/operations.md, "Seeing and retrying jobs"); unset: not mounted
  QUEUE_BOARD_PATH: z
    .string()
    .regex(/^(\/[A-Za-z0-9][A-Za-z0-9._~-]*)+$/, 'a path such as /admin/queues: /segment[/segment...], no trailing /')
    .refine((p) => !RESERVED_ROOTS.includes(p.split('/')[1]), {
      message: `must not start with a path the API serves (${RESERVED_ROOTS.map((r) => '/' + r).join(', ')})`,
    })
    .optional(),
  RATE_LIMIT_POSTS_PER_MIN: positiveInt.default(60),
  // what one reader may spend a calendar month (UTC); unset: no budget (docs/configuration.md, "Budgets")
  BUDGET_USD_PER_MONTH: z.coerce
    .number({ error: 'must be a number of US dollars, e.g. 20 or 0.5' })
    .min(0, 'must be 0 or more')
    .optional(),
  MESSAGE_MAX_CHARS: positiveInt.default(16_000),
  SSE_PING_MS: positiveInt.default(15_000),
  SSE_RETRY_MS: positiveInt.default(2_000),
  SSE_SLOW_CLIENT_MS: positiveInt.default(30_000),
  EVENT_POLL_MS: positiveInt.default(1_000),
  PROJECTIONS_ENABLED: bool.default(true),
  DISPATCHER_ENABLED: bool.default(true),
  AGENT_ENABLED: bool.default(true),
  // books: what one upload may cost to parse (docs/operations.md, "Upload limits")
  BOOK_MAX_EXPANSION_RATIO: positiveInt.default(50),
  BOOK_MAX_EXPANDED_MB: positiveInt.default(200),
  BOOK_MAX_PAGES: positiveInt.default(5_000),
  BOOK_PARSE_HEAP_MB: positiveInt.default(512),
  BOOK_PARSE_MAX_RSS_MB: positiveInt.default(768),
  BOOK_PARSE_TIMEOUT_MS: positiveInt.default(120_000),
  BOOK_INGEST_PER_USER: positiveInt.default(2),
  BOOK_INGEST_GLOBAL: positiveInt.default(8),
  BOOK_INGEST_CONCURRENCY: positiveInt.default(2),
  BOOK_INGEST_ENABLED: bool.default(true),
  // semantic retrieval next to full-text search (docs/configuration.md, "Embeddings")
  EMBEDDINGS_PROVIDER: z.enum(['none', 'voyage', 'openai']).default('none'),
  EMBEDDINGS_MODEL: z.string().min(1).optional(),
  EMBEDDINGS_API_KEY: z.string().min(1).optional(),
  EMBEDDINGS_BASE_URL: z.string().url().optional(),
  EMBEDDINGS_DIMENSIONS: positiveInt.optional(),
  EMBEDDINGS_BATCH_SIZE: positiveInt.default(128),
  EMBEDDINGS_TIMEOUT_MS: positiveInt.default(30_000),
  EMBEDDINGS_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(4),
  // contextual retrieval at ingest, opt-in: it costs model calls (docs/configuration.md)
  CONTEXTUAL_RETRIEVAL: bool.default(false),
  CONTEXTUAL_MODEL: z.string().min(1).default('claude-haiku-4-5'),
  CONTEXTUAL_CONCURRENCY: positiveInt.max(32).default(4),
  CONTEXTUAL_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(4),
  CONTEXTUAL_MAX_BOOK_TOKENS: positiveInt.default(150_000),
  CONTEXTUAL_MAX_OUTPUT_TOKENS: positiveInt.default(150),
  CONTEXTUAL_TIMEOUT_MS: positiveInt.default(120_000),
});

export type Env = z.infer<typeof envSchema>;

/** Tracing (docs/observability.md): null when OTEL_EXPORTER_OTLP_ENDPOINT is unset, and nothing starts. */
export interface TracingConfig {
  endpoint: string;
  protocol: 'http/protobuf' | 'http/json';
  /** OTEL_SERVICE_NAME, else the process's own (parley-api, parley-worker) */
  serviceName?: string;
  /** prompts and answers on the model-call spans (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) */
  captureContent: boolean;
}

export interface RedisNode {
  host: string;
  port: number;
}

/**
 * One server (REDIS_URL), a Redis Cluster (REDIS_CLUSTER_NODES: any of its nodes; the rest are
 * discovered), or Sentinel (REDIS_SENTINELS watching the primary named REDIS_SENTINEL_NAME). In the
 * last two, REDIS_URL still gives the password and TLS (rediss:) the servers share, if any.
 */
export type RedisTopology =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: RedisNode[]; password?: string; username?: string; tls: boolean }
  | { kind: 'sentinel'; sentinels: RedisNode[]; name: string; password?: string; username?: string; tls: boolean };

function hostPorts(list: string): RedisNode[] {
  return list.split(',').map((hp) => {
    const [host, port] = hp.trim().split(':');
    return { host, port: Number(port) };
  });
}

function redisTopology(e: Env): RedisTopology {
  if (e.REDIS_CLUSTER_NODES && e.REDIS_SENTINELS) {
    throw new ConfigError('Invalid environment:\n  REDIS_CLUSTER_NODES, REDIS_SENTINELS: set one, not both');
  }
  const url = new URL(e.REDIS_URL);
  const auth = {
    password: url.password ? decodeURIComponent(url.password) : undefined,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    tls: url.protocol === 'rediss:',
  };
  if (e.REDIS_CLUSTER_NODES) return { kind: 'cluster', nodes: hostPorts(e.REDIS_CLUSTER_NODES), ...auth };
  if (e.REDIS_SENTINELS) {
    return { kind: 'sentinel', sentinels: hostPorts(e.REDIS_SENTINELS), name: e.REDIS_SENTINEL_NAME, ...auth };
  }
  return { kind: 'single', url: e.REDIS_URL };
}

export interface AppConfig {
  env: Env['NODE_ENV'];
  databaseUrl: string;
  /** a streaming replica for history pages, read models and SSE catch-up; unset: the primary serves them */
  databaseReadUrl?: string;
  redisUrl: string;
  /** which Redis: REDIS_URL's one server, a Redis Cluster, or the primary Sentinel names */
  redis: RedisTopology;
  port: number;
  logLevel: Env['LOG_LEVEL'];
  auth: {
    /** HS256 secret (laptops, tests, `npm run cli -- token`); absent when only JWKS_URL signs in */
    jwtSecret?: string;
    /** the identity provider's RS256/ES256 keys; `issuer`/`audience` are checked when set */
    jwks?: { url: string; issuer?: string; audience?: string; cooldownMs: number };
  };
  llm: {
    provider: 'anthropic' | 'scripted';
    model: string;
    maxTokens: number;
    maxRetries: number;
    apiKey?: string;
    baseUrl?: string;
    retrievalMode: Env['LLM_RETRIEVAL_MODE'];
    /** always-retrieve also searches with a hypothetical answer passage the model writes (HyDE) */
    hyde: boolean;
    /** how often a turn waiting on a Message Batches API batch looks at it */
    batchPollMs: number;
  };
  agent: { maxIterations: number; contextTokens: number };
  worker: {
    concurrency: number;
    /** how long a stopping worker lets its turns finish before handing them back (SIGTERM) */
    shutdownGraceMs: number;
    /** how long a turn holds on while Postgres is away before its job is retried later */
    dbOutageMaxMs: number;
    /** how often a worker finishes erasures: jobs that were running, conversations deleted before erasure */
    erasureSweepMs: number;
    /** the port of this worker's Prometheus /metrics (0: any free one, logged); null: none */
    metricsPort: number | null;
    projectionsEnabled: boolean;
    dispatcherEnabled: boolean;
    agentEnabled: boolean;
  };
  queuePrefix: string;
  /** where the API serves the operators' queue board (Bull Board); null: it is not mounted */
  queueBoardPath: string | null;
  limits: { postsPerMinute: number; messageMaxChars: number };
  /** each reader's spend per calendar month (UTC), in USD; null: no budget. A token's claim may override it. */
  budgetUsdPerMonth: number | null;
  sse: { pingMs: number; retryMs: number; slowClientMs: number };
  eventPollMs: number;
  books: BookLimits;
  embeddings: EmbeddingsConfig;
  /** null: contextual retrieval is off (CONTEXTUAL_RETRIEVAL unset or false) */
  contextual: ContextualConfig | null;
  /** null: tracing is off (OTEL_EXPORTER_OTLP_ENDPOINT unset) */
  tracing: TracingConfig | null;
}

/** Contextual retrieval: the model that writes each passage's context, and how it is called. */
export interface ContextualConfig {
  model: string;
  apiKey?: string;
  baseUrl?: string;
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

export class ConfigError extends Error {}

/** Dev-only secret: never accepted outside NODE_ENV=development. */
export const DEV_JWT_SECRET = 'parley-dev-secret-do-not-use-in-production';

function parseEnv(source: NodeJS.ProcessEnv): Env {
  return parseWith(envSchema, source);
}

function parseWith<S extends z.ZodType>(schema: S, source: NodeJS.ProcessEnv): z.infer<S> {
  // empty strings count as unset, as docker-compose passes `VAR=` for blanks
  const raw = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== ''));
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid environment:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

function bookLimits(e: Env): BookLimits {
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

function embeddingsConfig(e: Env): EmbeddingsConfig {
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

function contextualConfig(e: Env): ContextualConfig | null {
  if (!e.CONTEXTUAL_RETRIEVAL) return null;
  if (!e.ANTHROPIC_API_KEY)
    throw new ConfigError('Invalid environment:\n  ANTHROPIC_API_KEY: required with CONTEXTUAL_RETRIEVAL=true');
  return {
    model: e.CONTEXTUAL_MODEL,
    apiKey: e.ANTHROPIC_API_KEY,
    baseUrl: e.ANTHROPIC_BASE_URL,
    concurrency: e.CONTEXTUAL_CONCURRENCY,
    maxRetries: e.CONTEXTUAL_MAX_RETRIES,
    maxBookTokens: e.CONTEXTUAL_MAX_BOOK_TOKENS,
    maxOutputTokens: e.CONTEXTUAL_MAX_OUTPUT_TOKENS,
    timeoutMs: e.CONTEXTUAL_TIMEOUT_MS,
  };
}

function tracingConfig(e: z.infer<typeof tracingSchema>): TracingConfig | null {
  if (!e.OTEL_EXPORTER_OTLP_ENDPOINT) return null;
  return {
    endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
    protocol: e.OTEL_EXPORTER_OTLP_PROTOCOL,
    serviceName: e.OTEL_SERVICE_NAME,
    captureContent: e.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
  };
}

/**
 * The tracing settings alone, read before anything else is loaded (tracing must patch modules
 * before they are required); the rest of the environment is validated when the app boots.
 */
export function loadTracingConfig(source: NodeJS.ProcessEnv = process.env): TracingConfig | null {
  return tracingConfig(parseWith(tracingSchema, source));
}

/** The contextual retrieval settings alone (null: off), for the CLI and the benchmark. */
export function loadContextualConfig(source: NodeJS.ProcessEnv = process.env): ContextualConfig | null {
  return contextualConfig(parseEnv(source));
}

/** The embeddings settings alone, for the CLI's `embeddings reembed` (which needs no JWT secret). */
export function loadEmbeddingsConfig(source: NodeJS.ProcessEnv = process.env): EmbeddingsConfig {
  return embeddingsConfig(parseEnv(source));
}

/** The book limits alone, for the CLI (which needs no JWT secret). */
export function loadBookLimits(source: NodeJS.ProcessEnv = process.env): BookLimits {
  return bookLimits(parseEnv(source));
}

/** DATABASE_URL alone, for tools that only talk to Postgres (migrate, CLI): they need no JWT secret. */
export function loadDatabaseUrl(source: NodeJS.ProcessEnv = process.env): string {
  return parseEnv(source).DATABASE_URL;
}

export function loadConfig(source: NodeJS.ProcessEnv = process.env): AppConfig {
  const e = parseEnv(source);
  return toAppConfig(e, authConfig(e));
}

/**
 * HS256 with AUTH_JWT_SECRET and/or the identity provider's keys at AUTH_JWKS_URL. The public dev
 * secret fills in only with NODE_ENV=development and no JWKS_URL (a provider means real users).
 */
function authConfig(e: Env): AppConfig['auth'] {
  const jwks = e.AUTH_JWKS_URL
    ? { url: e.AUTH_JWKS_URL, issuer: e.AUTH_ISSUER, audience: e.AUTH_AUDIENCE, cooldownMs: e.AUTH_JWKS_COOLDOWN_MS }
    : undefined;
  if (!jwks && (e.AUTH_ISSUER || e.AUTH_AUDIENCE)) {
    const name = e.AUTH_ISSUER ? 'AUTH_ISSUER' : 'AUTH_AUDIENCE';
    throw new ConfigError(`Invalid environment:\n  ${name}: only checked on AUTH_JWKS_URL tokens; set AUTH_JWKS_URL`);
  }
  const jwtSecret = e.AUTH_JWT_SECRET ?? (e.NODE_ENV === 'development' && !jwks ? DEV_JWT_SECRET : undefined);
  if (!jwtSecret && !jwks) {
    throw new ConfigError(
      'Invalid environment:\n  AUTH_JWT_SECRET: required unless AUTH_JWKS_URL is set or NODE_ENV=development',
    );
  }
  return { jwtSecret, jwks };
}

function toAppConfig(e: Env, auth: AppConfig['auth']): AppConfig {
  const provider = e.LLM_PROVIDER ?? (e.ANTHROPIC_API_KEY ? 'anthropic' : 'scripted');
  return {
    env: e.NODE_ENV,
    databaseUrl: e.DATABASE_URL,
    databaseReadUrl: e.DATABASE_READ_URL,
    redisUrl: e.REDIS_URL,
    redis: redisTopology(e),
    port: e.PORT,
    logLevel: e.LOG_LEVEL,
    auth,
    llm: {
      provider,
      model: e.LLM_MODEL,
      maxTokens: e.LLM_MAX_TOKENS,
      maxRetries: e.LLM_MAX_RETRIES,
      apiKey: e.ANTHROPIC_API_KEY,
      baseUrl: e.ANTHROPIC_BASE_URL,
      retrievalMode: e.LLM_RETRIEVAL_MODE,
      hyde: e.RETRIEVAL_HYDE ? e.RETRIEVAL_HYDE === 'true' : provider === 'anthropic',
      batchPollMs: e.LLM_BATCH_POLL_MS,
    },
    agent: { maxIterations: e.AGENT_MAX_ITERATIONS, contextTokens: e.AGENT_CONTEXT_TOKENS },
    worker: {
      concurrency: e.WORKER_CONCURRENCY,
      shutdownGraceMs: e.WORKER_SHUTDOWN_GRACE_MS,
      dbOutageMaxMs: e.DB_OUTAGE_MAX_MS,
      erasureSweepMs: e.ERASURE_SWEEP_MS,
      metricsPort: e.WORKER_METRICS_PORT ?? null,
      projectionsEnabled: e.PROJECTIONS_ENABLED,
      dispatcherEnabled: e.DISPATCHER_ENABLED,
      agentEnabled: e.AGENT_ENABLED,
    },
    queuePrefix: e.QUEUE_PREFIX,
    queueBoardPath: e.QUEUE_BOARD_PATH ?? null,
    limits: { postsPerMinute: e.RATE_LIMIT_POSTS_PER_MIN, messageMaxChars: e.MESSAGE_MAX_CHARS },
    budgetUsdPerMonth: e.BUDGET_USD_PER_MONTH ?? null,
    sse: { pingMs: e.SSE_PING_MS, retryMs: e.SSE_RETRY_MS, slowClientMs: e.SSE_SLOW_CLIENT_MS },
    eventPollMs: e.EVENT_POLL_MS,
    books: bookLimits(e),
    embeddings: embeddingsConfig(e),
    contextual: contextualConfig(e),
    tracing: tracingConfig(e),
  };
}
