import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConfigError,
  DEV_JWT_SECRET,
  loadConfig,
  loadDatabaseUrl,
  loadEmbeddingsConfig,
  loadTrustProxy,
} from './config';

describe(loadConfig.name, () => {
  it('gives every variable a laptop default in development', () => {
    const sut = loadConfig({ NODE_ENV: 'development' });
    expect(sut.databaseUrl).toBe('postgres://postgres@127.0.0.1:5432/parley');
    expect(sut.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(sut.port).toBe(3000);
    expect(sut.worker.concurrency).toBe(16);
    expect(sut.agent.maxIterations).toBe(5);
    expect(sut.queuePrefix).toBe('parley');
    expect(sut.limits.perMinute).toEqual({
      posts: 60,
      forks: 30,
      conversations: 30,
      batches: 10,
      searches: 120,
      mcpAsks: 30,
    });
    expect(sut.limits.streamsPerReader).toBe(20);
    expect(sut.auth.jwtSecret).toBe(DEV_JWT_SECRET);
    expect(sut.llm.provider).toBe('scripted');
  });

  it('picks the anthropic provider when an API key is set', () => {
    expect(loadConfig({ NODE_ENV: 'development', ANTHROPIC_API_KEY: 'k' }).llm.provider).toBe('anthropic');
    expect(loadConfig({ NODE_ENV: 'development', ANTHROPIC_API_KEY: 'k', LLM_PROVIDER: 'scripted' }).llm.provider).toBe(
      'scripted',
    );
  });

  it('stops boot naming the variable that is wrong', () => {
    expect(() => loadConfig({ NODE_ENV: 'development', PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ NODE_ENV: 'development', WORKER_CONCURRENCY: '0' })).toThrow(/WORKER_CONCURRENCY/);
    expect(() => loadConfig({ NODE_ENV: 'development', QUEUE_PREFIX: 'a:b' })).toThrow(ConfigError);
  });

  it('opens a worker metrics port only when WORKER_METRICS_PORT is set', () => {
    const dev = { NODE_ENV: 'development' } as const;
    expect(loadConfig(dev).worker.metricsPort).toBeNull();
    expect(loadConfig({ ...dev, WORKER_METRICS_PORT: '' }).worker.metricsPort).toBeNull();
    expect(loadConfig({ ...dev, WORKER_METRICS_PORT: '9464' }).worker.metricsPort).toBe(9464);
    expect(() => loadConfig({ ...dev, WORKER_METRICS_PORT: '70000' })).toThrow(/WORKER_METRICS_PORT/);
  });

  it('serves the API metrics on METRICS_PORT only when it is set', () => {
    const dev = { NODE_ENV: 'development' } as const;
    expect(loadConfig(dev).metricsPort).toBeNull();
    expect(loadConfig({ ...dev, METRICS_PORT: '' }).metricsPort).toBeNull();
    expect(loadConfig({ ...dev, METRICS_PORT: '9464' }).metricsPort).toBe(9464);
    expect(loadConfig({ ...dev, METRICS_PORT: '0' }).metricsPort).toBe(0);
    expect(() => loadConfig({ ...dev, METRICS_PORT: '70000' })).toThrow(/METRICS_PORT/);
  });

  it("trusts a proxy's X-Forwarded-* headers only as TRUST_PROXY says, in the forms Fastify's trustProxy takes", () => {
    const dev = { NODE_ENV: 'development' } as const;
    const trust = (v: string) => loadConfig({ ...dev, TRUST_PROXY: v }).trustProxy;
    expect(loadConfig(dev).trustProxy).toBe(false);
    expect(trust('')).toBe(false);
    expect(trust('false')).toBe(false);
    expect(trust('0')).toBe(false);
    expect(trust('true')).toBe(true);
    expect(trust('2')).toBe(2);
    expect(trust('127.0.0.1')).toEqual(['127.0.0.1']);
    expect(trust('10.0.0.0/8, 192.168.1.1 ,::1,fd00::/8,172.16.0.0/255.240.0.0,loopback')).toEqual([
      '10.0.0.0/8',
      '192.168.1.1',
      '::1',
      'fd00::/8',
      '172.16.0.0/255.240.0.0',
      'loopback',
    ]);
    expect(loadTrustProxy({ ...dev, TRUST_PROXY: '127.0.0.1' })).toEqual(['127.0.0.1']);
    expect(loadTrustProxy(dev)).toBe(false);
    for (const bad of [
      'yes',
      'TRUE',
      '-1',
      '1.5',
      '10.0.0.0/33',
      '::1/129',
      '10.0.0.0/8/8',
      'proxy.local',
      '10.0.0.1,',
      '*',
    ]) {
      expect(() => trust(bad)).toThrow(/TRUST_PROXY: .*expected true, false, a number of hops/);
    }
    expect(() => trust('10.0.0.1, nope')).toThrow(/TRUST_PROXY: "nope": expected/);
  });

  it("mounts the queue board only at a QUEUE_BOARD_PATH given, outside the API's own routes", () => {
    const dev = { NODE_ENV: 'development' } as const;
    expect(loadConfig(dev).queueBoardPath).toBeNull();
    expect(loadConfig({ ...dev, QUEUE_BOARD_PATH: '' }).queueBoardPath).toBeNull();
    expect(loadConfig({ ...dev, QUEUE_BOARD_PATH: '/admin/queues' }).queueBoardPath).toBe('/admin/queues');
    for (const bad of ['admin', '/', '/admin/', '/a//b', '/../x', '/a b', '/v1/queues', '/metrics', '/docs']) {
      expect(() => loadConfig({ ...dev, QUEUE_BOARD_PATH: bad })).toThrow(/QUEUE_BOARD_PATH/);
    }
  });

  it('takes BUDGET_USD_PER_MONTH as a number of dollars ≥ 0, and no budget when unset', () => {
    const dev = { NODE_ENV: 'development' } as const;
    expect(loadConfig(dev).budgetUsdPerMonth).toBeNull();
    expect(loadConfig({ ...dev, BUDGET_USD_PER_MONTH: '' }).budgetUsdPerMonth).toBeNull();
    expect(loadConfig({ ...dev, BUDGET_USD_PER_MONTH: '2.5' }).budgetUsdPerMonth).toBe(2.5);
    expect(loadConfig({ ...dev, BUDGET_USD_PER_MONTH: '0' }).budgetUsdPerMonth).toBe(0);
    expect(() => loadConfig({ ...dev, BUDGET_USD_PER_MONTH: '-1' })).toThrow(/BUDGET_USD_PER_MONTH: must be 0 or more/);
    for (const bad of ['five', '$5', 'Infinity', 'NaN']) {
      expect(() => loadConfig({ ...dev, BUDGET_USD_PER_MONTH: bad })).toThrow(
        /BUDGET_USD_PER_MONTH: must be a number of US dollars/,
      );
    }
  });

  it('picks the Redis topology from the variables set: one server, a cluster, or sentinels', () => {
    const dev = { NODE_ENV: 'development' } as const;
    expect(loadConfig(dev).redis).toEqual({ kind: 'single', url: 'redis://127.0.0.1:6379' });
    expect(
      loadConfig({ ...dev, REDIS_CLUSTER_NODES: '10.0.0.1:7001, 10.0.0.2:7002', REDIS_URL: 'rediss://:s%40cret@x:1' })
        .redis,
    ).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7001 },
        { host: '10.0.0.2', port: 7002 },
      ],
      password: 's@cret',
      username: undefined,
      tls: true,
    });
    expect(loadConfig({ ...dev, REDIS_SENTINELS: 'a:26379,b:26379' }).redis).toMatchObject({
      kind: 'sentinel',
      sentinels: [
        { host: 'a', port: 26379 },
        { host: 'b', port: 26379 },
      ],
      name: 'mymaster',
      tls: false,
    });
    expect(() => loadConfig({ ...dev, REDIS_CLUSTER_NODES: 'a:1', REDIS_SENTINELS: 'b:2' })).toThrow(
      /REDIS_CLUSTER_NODES, REDIS_SENTINELS/,
    );
    expect(() => loadConfig({ ...dev, REDIS_CLUSTER_NODES: 'a:1,b' })).toThrow(/REDIS_CLUSTER_NODES/);
    expect(() => loadConfig({ ...dev, REDIS_SENTINELS: 'a:port' })).toThrow(/REDIS_SENTINELS/);
  });

  it('never falls back to the public development secret unless NODE_ENV=development is explicit', () => {
    expect(() => loadConfig({})).toThrow(ConfigError);
    expect(() => loadConfig({})).toThrow(
      /AUTH_JWT_SECRET: required unless AUTH_JWKS_URL is set or NODE_ENV=development/,
    );
    expect(() => loadConfig({ NODE_ENV: '' })).toThrow(ConfigError); // docker-compose's blank
    expect(() => loadConfig({ NODE_ENV: 'test' })).toThrow(ConfigError);
    expect(loadConfig({ NODE_ENV: 'development' }).auth.jwtSecret).toBe(DEV_JWT_SECRET);
    expect(loadConfig({ AUTH_JWT_SECRET: 'x'.repeat(32) })).toMatchObject({
      env: 'production',
      auth: { jwtSecret: 'x'.repeat(32) },
    });
  });

  it('requires AUTH_JWT_SECRET outside development', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/AUTH_JWT_SECRET/);
    expect(loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: 'x'.repeat(32) }).auth.jwtSecret).toBe('x'.repeat(32));
  });
});

describe('identity provider settings', () => {
  const jwks = 'https://idp.example/.well-known/jwks.json';

  it('needs no AUTH_JWT_SECRET with AUTH_JWKS_URL, and never falls back to the dev secret then', () => {
    expect(loadConfig({ AUTH_JWKS_URL: jwks }).auth).toEqual({
      jwtSecret: undefined,
      jwks: { url: jwks, issuer: undefined, audience: undefined, cooldownMs: 30_000 },
    });
    expect(loadConfig({ NODE_ENV: 'development', AUTH_JWKS_URL: jwks }).auth.jwtSecret).toBeUndefined();
  });

  it('keeps AUTH_JWT_SECRET beside the provider, with issuer and audience', () => {
    const sut = loadConfig({
      AUTH_JWT_SECRET: 'x'.repeat(32),
      AUTH_JWKS_URL: jwks,
      AUTH_ISSUER: 'https://idp.example/',
      AUTH_AUDIENCE: 'parley',
      AUTH_JWKS_COOLDOWN_MS: '1000',
    });
    expect(sut.auth).toEqual({
      jwtSecret: 'x'.repeat(32),
      jwks: { url: jwks, issuer: 'https://idp.example/', audience: 'parley', cooldownMs: 1000 },
    });
  });

  it('refuses a bad URL, and issuer or audience without a key set to check them against', () => {
    expect(() => loadConfig({ AUTH_JWKS_URL: 'not a url' })).toThrow(/AUTH_JWKS_URL/);
    expect(() => loadConfig({ AUTH_JWT_SECRET: 'x'.repeat(32), AUTH_ISSUER: 'https://idp/' })).toThrow(/AUTH_ISSUER/);
    expect(() => loadConfig({ AUTH_JWT_SECRET: 'x'.repeat(32), AUTH_AUDIENCE: 'parley' })).toThrow(/AUTH_AUDIENCE/);
  });
});

describe(loadDatabaseUrl.name, () => {
  it('needs no JWT secret, for migrate and the CLI', () => {
    expect(loadDatabaseUrl({})).toBe('postgres://postgres@127.0.0.1:5432/parley');
    expect(loadDatabaseUrl({ DATABASE_URL: 'postgres://db/x' })).toBe('postgres://db/x');
    expect(() => loadDatabaseUrl({ DATABASE_URL: 'nope' })).toThrow(/DATABASE_URL/);
  });
});

describe('embeddings settings', () => {
  const secret = { AUTH_JWT_SECRET: 'x'.repeat(32) };

  it('are off by default (search stays lexical), with per-provider default models', () => {
    expect(loadConfig(secret).embeddings).toMatchObject({ provider: 'none', dimensions: null, batchSize: 128 });
    expect(loadEmbeddingsConfig({ EMBEDDINGS_PROVIDER: 'voyage', EMBEDDINGS_API_KEY: 'k' })).toMatchObject({
      provider: 'voyage',
      model: 'voyage-3.5',
      apiKey: 'k',
    });
    expect(
      loadEmbeddingsConfig({
        EMBEDDINGS_PROVIDER: 'openai',
        EMBEDDINGS_BASE_URL: 'http://tei:8080',
        EMBEDDINGS_MODEL: 'bge-m3',
        EMBEDDINGS_DIMENSIONS: '1024',
      }),
    ).toMatchObject({ provider: 'openai', model: 'bge-m3', baseUrl: 'http://tei:8080', dimensions: 1024 });
  });

  it('need a key for Voyage, and for OpenAI unless a base URL names a self-hosted server', () => {
    expect(() => loadEmbeddingsConfig({ EMBEDDINGS_PROVIDER: 'voyage' })).toThrow(/EMBEDDINGS_API_KEY/);
    expect(() => loadEmbeddingsConfig({ EMBEDDINGS_PROVIDER: 'openai' })).toThrow(/EMBEDDINGS_API_KEY/);
    expect(() => loadEmbeddingsConfig({ EMBEDDINGS_PROVIDER: 'cohere' })).toThrow(/EMBEDDINGS_PROVIDER/);
    expect(() => loadEmbeddingsConfig({ EMBEDDINGS_DIMENSIONS: '0' })).toThrow(/EMBEDDINGS_DIMENSIONS/);
  });
});

describe('LLM_PRICES, LLM_PROVIDERS and the openai provider', () => {
  const dev = { NODE_ENV: 'development' } as const;
  const openai = { ...dev, LLM_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-x' } as const;

  it('reads the price table from JSON or from a file', () => {
    const table = { 'acme-chat-1': { provider: 'openai', input: 2, output: 8, cachedInput: 0.5 } };
    expect(loadConfig({ ...openai, LLM_PRICES: JSON.stringify(table) }).llm.prices).toEqual(table);
    const dir = mkdtempSync(join(tmpdir(), 'prices-'));
    writeFileSync(join(dir, 'prices.json'), JSON.stringify(table));
    expect(loadConfig({ ...openai, LLM_PRICES: join(dir, 'prices.json') }).llm.prices).toEqual(table);
  });

  it.each([
    ['{"acme": {"provider": "openai", "input": 2}}', /LLM_PRICES\.acme\.output/],
    ['{"acme": {"provider": "azure", "input": 2, "output": 8}}', /LLM_PRICES\.acme\.provider/],
    ['{"acme": {"provider": "openai", "input": -1, "output": 8}}', /LLM_PRICES\.acme\.input: must be 0 or more/],
    ['{"acme": {"provider": "openai", "input": 1, "output": 8, "cached": 1}}', /LLM_PRICES/],
    ['{"acme": ', /LLM_PRICES: not JSON/],
    ['/nowhere/prices.json', /LLM_PRICES: neither a JSON object nor a readable file/],
  ])('refuses to start on a malformed LLM_PRICES (%s)', (raw, message) => {
    expect(() => loadConfig({ ...openai, LLM_PRICES: raw })).toThrow(message);
  });

  it('needs OPENAI_API_KEY unless OPENAI_BASE_URL names a self-hosted server', () => {
    expect(() => loadConfig({ ...dev, LLM_PROVIDER: 'openai' })).toThrow(/OPENAI_API_KEY/);
    const local = loadConfig({ ...dev, LLM_PROVIDER: 'openai', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' });
    expect(local.llm.openai).toEqual({ apiKey: undefined, baseUrl: 'http://127.0.0.1:11434/v1' });
  });

  it('talks to LLM_PROVIDER alone unless LLM_PROVIDERS names more, which must include it', () => {
    expect(loadConfig(openai).llm.providers).toEqual(['openai']);
    expect(loadConfig({ ...openai, LLM_PROVIDERS: 'openai, anthropic' }).llm.providers).toEqual([
      'openai',
      'anthropic',
    ]);
    expect(() => loadConfig({ ...openai, LLM_PROVIDERS: 'anthropic' })).toThrow(/LLM_PROVIDERS: must name/);
    expect(() => loadConfig({ ...openai, LLM_PROVIDERS: 'openai,mistral' })).toThrow(/LLM_PROVIDERS/);
  });
});
