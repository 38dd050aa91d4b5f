/**
 * Starts the real processes (built dist/ of api and worker) against a private database and a
 * private BullMQ prefix, as production runs them. `npm test` builds first (pretest).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import path from 'node:path';
import { createParleyClient } from '../../libs/api-client/src';
import { projectRoot } from '../../libs/platform/src/project-root';
import { createTestDatabase, redisUrl, TestDatabase } from './test-database';
import { watchProcess } from './process-registry';
import { waitFor } from './wait-for';
import { freePort } from './free-port';

export { freePort };

export const TEST_JWT_SECRET = 'parley-test-secret-' + 'x'.repeat(24);
const ROOT = projectRoot(__dirname); // also from the compiled copy under dist/ (npm run bench)

export interface Proc {
  name: string;
  child: ChildProcess;
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface Stack {
  db: TestDatabase;
  env: Record<string, string>;
  apis: Array<Proc & { base: string }>;
  workers: Proc[];
  base: string;
  startWorker(): Promise<Proc>;
  stop(): Promise<void>;
}

/** Runs `node <args>` from the project root, keeping the tail of its output; kill() waits for the exit. */
export function startProcess(name: string, args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => {
    out += d.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  const unwatch = watchProcess({
    name,
    output: () => out,
    state: () => (hasExited() ? `exited: ${child.signalCode ?? child.exitCode}` : `running, pid ${child.pid}`),
  });
  return {
    name,
    child,
    output: () => out,
    kill: async (signal: NodeJS.Signals = 'SIGTERM') => {
      unwatch();
      if (hasExited()) return;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** As `npm run start:api` / `start:worker` and the Docker image run them (docs/operations.md). */
export const SERVICE_NODE_ARGS = ['--max-old-space-size=1024'];

export async function startStack(
  opts: {
    apis?: number;
    workers?: number;
    env?: Record<string, string>;
    database?: TestDatabase;
    /** extra arguments for node before each process's script (e.g. --heapsnapshot-signal=SIGUSR2) */
    nodeArgs?: string[];
  } = {},
): Promise<Stack> {
  const db = opts.database ?? (await createTestDatabase());
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl(),
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
    QUEUE_PREFIX: `t${randomBytes(4).toString('hex')}`,
    LLM_PROVIDER: 'scripted',
    // the suites test the tool-use loop on small books, which `auto` (the default) would send
    // whole; test/e2e/whole-book.e2e-spec.ts sets `auto` itself
    LLM_RETRIEVAL_MODE: 'tools',
    LOG_LEVEL: 'warn',
    EVENT_POLL_MS: '500',
    SSE_RETRY_MS: '20',
    // suites make many requests quickly; test/e2e/rate-limits.e2e-spec.ts and ops set the limits they test
    RATE_LIMIT_POSTS_PER_MIN: '10000',
    RATE_LIMIT_FORKS_PER_MIN: '10000',
    RATE_LIMIT_CONVERSATIONS_PER_MIN: '10000',
    RATE_LIMIT_BATCHES_PER_MIN: '10000',
    RATE_LIMIT_SEARCHES_PER_MIN: '10000',
    RATE_LIMIT_MCP_ASKS_PER_MIN: '10000',
    SSE_MAX_STREAMS_PER_READER: '10000',
    ...opts.env,
  };
  const apis: Stack['apis'] = [];
  const workers: Proc[] = [];
  const startWorker = async () => {
    const w = startProcess(
      `worker${workers.length}`,
      [...SERVICE_NODE_ARGS, ...(opts.nodeArgs ?? []), path.join(ROOT, 'dist/apps/worker/src/main.js')],
      env,
    );
    workers.push(w);
    return w;
  };
  for (let i = 0; i < (opts.apis ?? 1); i++) {
    const port = await freePort();
    const p = startProcess(
      `api${i}`,
      [...SERVICE_NODE_ARGS, ...(opts.nodeArgs ?? []), path.join(ROOT, 'dist/apps/api/src/main.js')],
      {
        ...env,
        PORT: String(port),
      },
    );
    apis.push({ ...p, base: `http://127.0.0.1:${port}` });
  }
  for (let i = 0; i < (opts.workers ?? 1); i++) await startWorker();
  const stack: Stack = {
    db,
    env,
    apis,
    workers,
    base: apis[0]?.base ?? '',
    startWorker,
    stop: async () => {
      await Promise.all([...apis, ...workers].map((p) => p.kill()));
      await db.drop();
    },
  };
  for (const api of apis) {
    await waitFor(
      `${api.name} /readyz`,
      async () => {
        if (api.child.exitCode !== null) throw new Error(`${api.name} exited:\n${api.output()}`);
        return (await fetch(`${api.base}/readyz`).catch(() => undefined))?.ok;
      },
      30_000,
      100,
    ).catch(async (e) => {
      await stack.stop();
      throw e;
    });
  }
  return stack;
}

/** Env that points the workers' real Anthropic SDK at a fake Messages API server. */
export function fakeAnthropicEnv(fakeUrl: string): Record<string, string> {
  return { LLM_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: 'sk-fake', ANTHROPIC_BASE_URL: fakeUrl };
}

/**
 * An HS256 token, as `npm run cli -- token` mints one (apps/api/src/auth/mint-token.ts, with jose);
 * `claims`: more of the payload, e.g. `{ parley_budget_usd_per_month: 0 }`. Signed here with
 * node:crypto because jose signs only asynchronously and suites build clients synchronously;
 * test/unit/test-tokens.spec.ts shows the API's verifier takes it.
 */
export function tokenFor(
  userId: string,
  opts: { ttlSeconds?: number; secret?: string; claims?: Record<string, unknown> } = {},
): string {
  const iat = Math.floor(Date.now() / 1000);
  const part = (json: object) => Buffer.from(JSON.stringify(json)).toString('base64url');
  const signed = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ ...opts.claims, sub: userId, iat, exp: iat + (opts.ttlSeconds ?? 3600) })}`;
  const signature = createHmac('sha256', opts.secret ?? TEST_JWT_SECRET)
    .update(signed)
    .digest('base64url');
  return `${signed}.${signature}`;
}

export interface Reply<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

/**
 * A client as an app developer writes one: `api` is the typed client generated from the OpenAPI
 * document (what the e2e tests use for well-formed calls); `req` is raw fetch with a bearer
 * token, for what a typed client cannot send (malformed bodies, forged headers).
 */
export function clientFor(
  base: string,
  userId: string,
  opts: { ttlSeconds?: number; secret?: string; claims?: Record<string, unknown> } = {},
) {
  const token = tokenFor(userId, opts);
  const auth = { authorization: `Bearer ${token}` };
  async function req<T = any>(
    method: string,
    p: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply<T>> {
    const init: RequestInit = {
      method,
      headers: { ...auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    };
    const r = await fetch(base + p, init);
    const text = await r.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: r.status, body: json, text, headers: r.headers };
  }
  const api = createParleyClient({ baseUrl: base, token });
  return { req, api, token, auth, userId, base };
}
export type Client = ReturnType<typeof clientFor>;
