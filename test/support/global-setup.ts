/**
 * Jest global setup: finds Postgres and Redis (DATABASE_URL / REDIS_URL, else the local
 * services, else testcontainers where a Docker engine runs), then migrates a template database
 * that every test file clones (CREATE DATABASE … TEMPLATE) for a fast, private database.
 */
import { execSync } from 'node:child_process';
import { Client } from 'pg';
import { migrate } from '../../scripts/migrate';

const LOCAL_PG = 'postgres://postgres@127.0.0.1:5432/postgres';
const LOCAL_REDIS = 'redis://127.0.0.1:6379';

async function reachable(url: string): Promise<boolean> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await c.connect();
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

function dockerRuns(): boolean {
  try {
    execSync('docker info', { stdio: 'ignore', timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
}

async function startContainers(): Promise<{ pg: string; redis: string; stop: () => Promise<void> }> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const { RedisContainer } = await import('@testcontainers/redis');
  const pg = await new PostgreSqlContainer('postgres:16-alpine').start();
  const redis = await new RedisContainer('redis:7-alpine').start();
  return {
    pg: pg.getConnectionUri(),
    redis: redis.getConnectionUrl(),
    stop: async () => {
      await pg.stop();
      await redis.stop();
    },
  };
}

export default async function globalSetup(): Promise<void> {
  let baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) {
    if (await reachable(LOCAL_PG)) {
      baseUrl = LOCAL_PG;
      process.env.REDIS_URL ??= LOCAL_REDIS;
    } else if (dockerRuns()) {
      const c = await startContainers();
      baseUrl = c.pg;
      process.env.REDIS_URL = c.redis;
      (globalThis as { __parleyContainers?: typeof c }).__parleyContainers = c;
    } else {
      throw new Error('no Postgres: set DATABASE_URL, run one on 127.0.0.1:5432, or start a Docker engine');
    }
  }
  process.env.REDIS_URL ??= LOCAL_REDIS;
  const template = new URL(baseUrl);
  template.pathname = `/parley_tpl_${process.pid}`;
  process.env.PARLEY_TEST_TEMPLATE_URL = template.toString();
  process.env.PARLEY_TEST_RUN = String(process.pid);
  await migrate(template.toString());
}
