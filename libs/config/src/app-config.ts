import {
  bookLimits,
  BookLimits,
  contextualConfig,
  ContextualConfig,
  embeddingsConfig,
  EmbeddingsConfig,
} from './books-config';
import { Env } from './env';
import { corsConfig, CorsConfig, webhooksConfig, WebhooksConfig } from './integrations-config';
import { llmConfig, LlmConfig } from './llm-config';
import { redisTopology, RedisTopology } from './redis-topology';
import { toolServersConfig, ToolServersConfig } from './tool-servers-config';
import { tracingConfig, TracingConfig } from './tracing-config';

/** What one reader may do a minute, each counted on its own (RATE_LIMIT_*_PER_MIN). */
export interface RateLimitsPerMinute {
  posts: number;
  forks: number;
  conversations: number;
  batches: number;
  searches: number;
  mcpAsks: number;
}

/** The validated environment as the app reads it: nested by concern, every default applied. */
export interface AppConfig {
  env: Env['NODE_ENV'];
  databaseUrl: string;
  /** a streaming replica for history pages, read models and SSE catch-up; unset: the primary serves them */
  databaseReadUrl?: string;
  redisUrl: string;
  /** which Redis: REDIS_URL's one server, a Redis Cluster, or the primary Sentinel names */
  redis: RedisTopology;
  port: number;
  /**
   * the address the API and the metrics ports listen on (HOST): loopback by default under
   * NODE_ENV=development, whose public development secret must not reach the network; every
   * interface otherwise
   */
  host: string;
  /** the port of the API's Prometheus /metrics (0: any free one, logged); null: none. Never served on `port`. */
  metricsPort: number | null;
  /** Fastify's trustProxy: which peers' X-Forwarded-* headers count (false: none; true: all; hops; addresses) */
  trustProxy: boolean | number | string[];
  logLevel: Env['LOG_LEVEL'];
  auth: {
    /** HS256 secret (laptops, tests, `npm run cli -- token`); absent when only JWKS_URL signs in */
    jwtSecret?: string;
    /** the identity provider's RS256/ES256 keys; `issuer`/`audience` are checked when set */
    jwks?: { url: string; issuer?: string; audience?: string; cooldownMs: number };
  };
  llm: LlmConfig;
  /** approvalTimeoutMs: how long a tool call waits for the reader's approval before it is denied (undefined: for ever) */
  agent: { maxIterations: number; contextTokens: number; approvalTimeoutMs?: number };
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
  /**
   * the erasure journal's database (docs/erasure.md, "Backups and restores"): kept apart from the
   * main one so that restoring a backup of the main one does not roll it back; null: no journal
   */
  erasureJournalUrl: string | null;
  queuePrefix: string;
  /** where the API serves the operators' queue board (Bull Board); null: it is not mounted */
  queueBoardPath: string | null;
  /** the MCP server at /mcp (docs/mcp.md); off: the path is a 404 like any unknown route */
  mcp: { enabled: boolean };
  /** the operator's tools from MCP servers, offered to the model beside Parley's own (docs/tools.md) */
  toolServers: ToolServersConfig;
  limits: {
    /** each a per-reader count a minute, over all API replicas; a fork counts 1 + 1 per 100 events it copies */
    perMinute: RateLimitsPerMinute;
    /** SSE streams one reader may hold open at once, over all API replicas */
    streamsPerReader: number;
    messageMaxChars: number;
  };
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
  /** browser origins allowed to call the API (none: CORS off) */
  cors: CorsConfig;
  webhooks: WebhooksConfig;
}

export function toAppConfig(e: Env, auth: AppConfig['auth']): AppConfig {
  return {
    env: e.NODE_ENV,
    databaseUrl: e.DATABASE_URL,
    databaseReadUrl: e.DATABASE_READ_URL,
    redisUrl: e.REDIS_URL,
    redis: redisTopology(e),
    port: e.PORT,
    host: e.HOST ?? (e.NODE_ENV === 'development' ? '127.0.0.1' : '0.0.0.0'),
    metricsPort: e.METRICS_PORT ?? null,
    trustProxy: e.TRUST_PROXY ?? false,
    logLevel: e.LOG_LEVEL,
    auth,
    llm: llmConfig(e),
    agent: {
      maxIterations: e.AGENT_MAX_ITERATIONS,
      contextTokens: e.AGENT_CONTEXT_TOKENS,
      ...(e.APPROVAL_TIMEOUT_MS !== undefined ? { approvalTimeoutMs: e.APPROVAL_TIMEOUT_MS } : {}),
    },
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
    erasureJournalUrl: e.ERASURE_JOURNAL_URL ?? null,
    queuePrefix: e.QUEUE_PREFIX,
    queueBoardPath: e.QUEUE_BOARD_PATH ?? null,
    mcp: { enabled: e.MCP_ENABLED },
    toolServers: toolServersConfig(e),
    limits: {
      perMinute: {
        posts: e.RATE_LIMIT_POSTS_PER_MIN,
        forks: e.RATE_LIMIT_FORKS_PER_MIN,
        conversations: e.RATE_LIMIT_CONVERSATIONS_PER_MIN,
        batches: e.RATE_LIMIT_BATCHES_PER_MIN,
        searches: e.RATE_LIMIT_SEARCHES_PER_MIN,
        mcpAsks: e.RATE_LIMIT_MCP_ASKS_PER_MIN,
      },
      streamsPerReader: e.SSE_MAX_STREAMS_PER_READER,
      messageMaxChars: e.MESSAGE_MAX_CHARS,
    },
    budgetUsdPerMonth: e.BUDGET_USD_PER_MONTH ?? null,
    sse: { pingMs: e.SSE_PING_MS, retryMs: e.SSE_RETRY_MS, slowClientMs: e.SSE_SLOW_CLIENT_MS },
    eventPollMs: e.EVENT_POLL_MS,
    books: bookLimits(e),
    embeddings: embeddingsConfig(e),
    contextual: contextualConfig(e),
    tracing: tracingConfig(e),
    cors: corsConfig(e),
    webhooks: webhooksConfig(e),
  };
}
