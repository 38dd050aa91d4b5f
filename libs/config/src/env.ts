import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * The one env schema (docs/configuration.md), validated once at boot. Nothing else reads process.env:
 * everything gets this typed object injected.
 */
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const positiveInt = z.coerce.number().int().positive();
/** First path segments the API's own routes use: the queue board must not shadow them. */
const RESERVED_ROOTS = [
  'v1',
  'docs',
  'docs-json',
  'docs-yaml',
  'web',
  'healthz',
  'readyz',
  'version',
  'metrics',
  'problems',
  'mcp',
];
const HOST_PORT_LIST = /^\s*[^\s,:]+:\d{1,5}\s*(,\s*[^\s,:]+:\d{1,5}\s*)*$/;
const port = z.coerce.number().int().min(0).max(65535);

/** Names Fastify's trustProxy (proxy-addr) knows for ranges of addresses. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
const TRUST_PROXY_FORMS =
  'true, false, a number of hops (1, 2 …), or addresses and CIDRs separated by commas (127.0.0.1, 10.0.0.0/8, ::1, loopback)';

/** An address, a CIDR (`10.0.0.0/8`, `fd00::/8`), an IPv4 netmask (`10.0.0.0/255.0.0.0`) or a range's name. */
function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.includes(entry)) return true;
  const [address, range, ...rest] = entry.split('/');
  const family = isIP(address);
  if (!family || rest.length > 0) return false;
  if (range === undefined) return true;
  if (/^\d{1,3}$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(range) === 4;
}

/**
 * TRUST_PROXY as Fastify's `trustProxy` takes it: `true` (every peer), a hop count, or the proxies'
 * addresses and CIDRs; `false` and unset trust no peer, so X-Forwarded-* headers are ignored.
 */
const trustProxy = z.string().transform((raw, ctx): boolean | number | string[] => {
  const v = raw.trim();
  if (v === 'true' || v === 'false') return v === 'true';
  if (/^\d+$/.test(v)) return Number(v) === 0 ? false : Number(v);
  const entries = v.split(',').map((e) => e.trim());
  const bad = entries.filter((e) => !isProxyAddress(e));
  if (bad.length === 0) return entries;
  ctx.addIssue({ code: 'custom', message: `${bad.map((b) => `"${b}"`).join(', ')}: expected ${TRUST_PROXY_FORMS}` });
  return z.NEVER;
});

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

/**
 * CORS_ORIGINS: exact origins (`https://app.example.com`, scheme, host and port, no path) separated
 * by commas, or `*` for any origin, an explicit choice.
 */
const corsOrigins = z.string().transform((raw, ctx): string[] => {
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  const bad = entries.filter((e) => e !== '*' && !isOrigin(e));
  if (bad.length === 0) return entries;
  ctx.addIssue({
    code: 'custom',
    message: `${bad.map((b) => `"${b}"`).join(', ')}: expected origins such as https://app.example.com (scheme, host, port; no path), or *`,
  });
  return z.NEVER;
});

function isOrigin(entry: string): boolean {
  if (entry.includes('*')) return false; // no wildcard subdomains: exact origins only
  try {
    const url = new URL(entry);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === entry;
  } catch {
    return false;
  }
}

const envSchema = tracingSchema.extend({
  // unset means production: only an explicit development may use the public DEV_JWT_SECRET
  NODE_ENV: z.enum(['development', 'production', 'test']).default('production'),
  DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/parley'),
  DATABASE_READ_URL: z.string().url().optional(),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER_NODES: z.string().regex(HOST_PORT_LIST, 'host:port,host:port,...').optional(),
  REDIS_SENTINELS: z.string().regex(HOST_PORT_LIST, 'host:port,host:port,...').optional(),
  REDIS_SENTINEL_NAME: z.string().min(1).default('mymaster'),
  PORT: port.default(3000),
  // the address the API and the metrics ports listen on; unset: loopback in development, every interface otherwise
  HOST: z.string().min(1).optional(),
  // the API's Prometheus /metrics, on a port of its own; unset: none (never on PORT)
  METRICS_PORT: port.optional(),
  // which peers may set X-Forwarded-For/-Proto/-Host (docs/configuration.md); unset: none
  TRUST_PROXY: trustProxy.optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LLM_PROVIDER: z.enum(['anthropic', 'openai', 'scripted']).optional(),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: z.string().url().optional(),
  LLM_MODEL: z.string().min(1).default('claude-sonnet-5-5'),
  LLM_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
  LLM_MAX_TOKENS: positiveInt.default(1024),
  LLM_RETRIEVAL_MODE: z.enum(['auto', 'tools', 'always-retrieve', 'whole-book']).default('auto'),
  // whole-book retrieval (docs/books.md, "Whole-book answers"): the book in the prompt, held in the prompt cache
  WHOLE_BOOK_MAX_TOKENS: positiveInt.default(120_000),
  WHOLE_BOOK_CACHE_TTL: z.enum(['5m', '1h']).default('5m'),
  RETRIEVAL_HYDE: z.enum(['true', 'false']).optional(),
  // bring your own model (docs/providers.md): OpenAI's Chat Completions API or a compatible server,
  // several providers at once, and the price table that ties each model to its provider
  LLM_PROVIDERS: z
    .string()
    .regex(/^\s*(anthropic|openai)\s*(,\s*(anthropic|openai)\s*)*$/, 'anthropic, openai or both, comma-separated')
    .optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.string().url().optional(),
  LLM_PRICES: z.string().min(1).optional(),
  LLM_SUMMARY_MODEL: z.string().min(1).optional(),
  // the models a conversation's policy.model may name: ids, comma-separated, or * for any priced one
  POLICY_MODELS: z
    .string()
    .regex(/^\s*(\*|[^\s,*]+(\s*,\s*[^\s,*]+)*)\s*$/, 'model ids, comma-separated, or *')
    .optional(),
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
  WORKER_METRICS_PORT: port.optional(),
  DB_OUTAGE_MAX_MS: positiveInt.default(300_000),
  ERASURE_SWEEP_MS: positiveInt.default(5_000),
  // the erasure journal, a database that backups of DATABASE_URL do not hold (docs/erasure.md); unset: off
  ERASURE_JOURNAL_URL: z.string().url().optional(),
  AGENT_MAX_ITERATIONS: positiveInt.default(5),
  APPROVAL_TIMEOUT_MS: positiveInt.optional(),
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
  // the MCP server at /mcp (docs/mcp.md); on unless turned off
  MCP_ENABLED: bool.default(true),
  // the operator's tools from MCP servers (docs/tools.md): a JSON object, or the path of a file holding one
  MCP_TOOL_SERVERS: z.string().min(1).optional(),
  // the longest one call of such a tool may take, and the most text of its result the model reads
  MCP_TOOL_TIMEOUT_MS: positiveInt.max(600_000).default(30_000),
  MCP_TOOL_RESULT_MAX_BYTES: positiveInt.min(1_024).max(1_048_576).default(32_768),
  RATE_LIMIT_POSTS_PER_MIN: positiveInt.default(60),
  // per reader, over all API replicas: generous for a person, tight for a script (docs/configuration.md, "Rate limits")
  RATE_LIMIT_FORKS_PER_MIN: positiveInt.default(30),
  RATE_LIMIT_CONVERSATIONS_PER_MIN: positiveInt.default(30),
  RATE_LIMIT_BATCHES_PER_MIN: positiveInt.default(10),
  RATE_LIMIT_SEARCHES_PER_MIN: positiveInt.default(120),
  RATE_LIMIT_MCP_ASKS_PER_MIN: positiveInt.default(30),
  SSE_MAX_STREAMS_PER_READER: positiveInt.default(20),
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
  // apps on other origins (docs/cors.md, docs/webhooks.md)
  // browser origins allowed to call the API, exact, comma-separated (`*`: any); unset: none
  CORS_ORIGINS: corsOrigins.optional(),
  // webhook URLs may name loopback, link-local and private addresses (an operator's own network)
  WEBHOOKS_ALLOW_PRIVATE_URLS: bool.default(false),
  // tries of one delivery before it is given up and its endpoint disabled
  WEBHOOKS_MAX_ATTEMPTS: positiveInt.max(30).default(8),
  // the pause after a delivery's first failed try, doubling after each next one
  WEBHOOKS_RETRY_BASE_MS: positiveInt.default(30_000),
  WEBHOOKS_RETRY_MAX_MS: positiveInt.default(3_600_000),
  // the whole of one try, lookup to the answer's last byte, whatever the receiver does
  WEBHOOKS_TIMEOUT_MS: positiveInt.max(60_000).default(10_000),
  // deliveries in flight at once, across the workers, to one endpoint and to one reader's endpoints
  WEBHOOKS_IN_FLIGHT_PER_ENDPOINT: positiveInt.max(32).default(2),
  WEBHOOKS_IN_FLIGHT_PER_READER: positiveInt.max(256).default(8),
});

export type Env = z.infer<typeof envSchema>;

export class ConfigError extends Error {}

export function parseEnv(source: NodeJS.ProcessEnv): Env {
  return parseWith(envSchema, source);
}

/** The tracing variables alone: tracing starts before the rest of the environment is read. */
export type TracingEnv = z.infer<typeof tracingSchema>;

export function parseTracingEnv(source: NodeJS.ProcessEnv): TracingEnv {
  return parseWith(tracingSchema, source);
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

/** Every variable the schema reads, for the check that docs/configuration.md lists them all. */
export const ENV_VARIABLES: readonly string[] = Object.keys(envSchema.shape);
