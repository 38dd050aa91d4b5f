"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.DEV_JWT_SECRET = exports.ConfigError = void 0;
exports.loadConfig = loadConfig;
const zod_1 = require("zod");
/**
 * The one env schema of DESIGN.md, validated once at boot. Nothing else reads process.env:
 * everything gets this typed object injected.
 */
const bool = zod_1.z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const positiveInt = zod_1.z.coerce.number().int().positive();
const envSchema = zod_1.z.object({
    NODE_ENV: zod_1.z.enum(['development', 'production', 'test']).default('development'),
    DATABASE_URL: zod_1.z.string().url().default('postgres://postgres@127.0.0.1:5432/parley'),
    REDIS_URL: zod_1.z.string().url().default('redis://127.0.0.1:6379'),
    PORT: zod_1.z.coerce.number().int().min(0).max(65535).default(3000),
    LOG_LEVEL: zod_1.z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    LLM_PROVIDER: zod_1.z.enum(['anthropic', 'scripted']).optional(),
    ANTHROPIC_API_KEY: zod_1.z.string().min(1).optional(),
    ANTHROPIC_BASE_URL: zod_1.z.string().url().optional(),
    LLM_MODEL: zod_1.z.string().min(1).default('claude-sonnet-5-5'),
    LLM_MAX_RETRIES: zod_1.z.coerce.number().int().min(0).max(10).default(3),
    LLM_MAX_TOKENS: positiveInt.default(1024),
    LLM_RETRIEVAL_MODE: zod_1.z.enum(['auto', 'tools', 'always-retrieve']).default('auto'),
    AUTH_JWT_SECRET: zod_1.z.string().min(16, 'must be at least 16 characters').optional(),
    WORKER_CONCURRENCY: positiveInt.default(16),
    AGENT_MAX_ITERATIONS: positiveInt.default(5),
    AGENT_CONTEXT_TOKENS: positiveInt.default(60_000),
    QUEUE_PREFIX: zod_1.z
        .string()
        .regex(/^[a-zA-Z0-9_-]+$/, 'letters, digits, _ and - only')
        .default('parley'),
    RATE_LIMIT_POSTS_PER_MIN: positiveInt.default(60),
    MESSAGE_MAX_CHARS: positiveInt.default(16_000),
    SSE_PING_MS: positiveInt.default(15_000),
    SSE_RETRY_MS: positiveInt.default(2_000),
    EVENT_POLL_MS: positiveInt.default(1_000),
    PROJECTIONS_ENABLED: bool.default(true),
    DISPATCHER_ENABLED: bool.default(true),
    AGENT_ENABLED: bool.default(true),
});
class ConfigError extends Error {
}
exports.ConfigError = ConfigError;
/** Dev-only secret: never accepted outside NODE_ENV=development. */
exports.DEV_JWT_SECRET = 'parley-dev-secret-do-not-use-in-production';
function loadConfig(source = process.env) {
    // empty strings count as unset, as docker-compose passes `VAR=` for blanks
    const raw = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== ''));
    const parsed = envSchema.safeParse(raw);
    if (!parsed.success) {
        const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
        throw new ConfigError(`Invalid environment:\n${lines.join('\n')}`);
    }
    const e = parsed.data;
    const jwtSecret = e.AUTH_JWT_SECRET ?? (e.NODE_ENV === 'development' ? exports.DEV_JWT_SECRET : undefined);
    if (!jwtSecret) {
        throw new ConfigError('Invalid environment:\n  AUTH_JWT_SECRET: required unless NODE_ENV=development');
    }
    return {
        env: e.NODE_ENV,
        databaseUrl: e.DATABASE_URL,
        redisUrl: e.REDIS_URL,
        port: e.PORT,
        logLevel: e.LOG_LEVEL,
        auth: { jwtSecret },
        llm: {
            provider: e.LLM_PROVIDER ?? (e.ANTHROPIC_API_KEY ? 'anthropic' : 'scripted'),
            model: e.LLM_MODEL,
            maxTokens: e.LLM_MAX_TOKENS,
            maxRetries: e.LLM_MAX_RETRIES,
            apiKey: e.ANTHROPIC_API_KEY,
            baseUrl: e.ANTHROPIC_BASE_URL,
            retrievalMode: e.LLM_RETRIEVAL_MODE,
        },
        agent: { maxIterations: e.AGENT_MAX_ITERATIONS, contextTokens: e.AGENT_CONTEXT_TOKENS },
        worker: {
            concurrency: e.WORKER_CONCURRENCY,
            projectionsEnabled: e.PROJECTIONS_ENABLED,
            dispatcherEnabled: e.DISPATCHER_ENABLED,
            agentEnabled: e.AGENT_ENABLED,
        },
        queuePrefix: e.QUEUE_PREFIX,
        limits: { postsPerMinute: e.RATE_LIMIT_POSTS_PER_MIN, messageMaxChars: e.MESSAGE_MAX_CHARS },
        sse: { pingMs: e.SSE_PING_MS, retryMs: e.SSE_RETRY_MS },
        eventPollMs: e.EVENT_POLL_MS,
    };
}
//# sourceMappingURL=config.js.map