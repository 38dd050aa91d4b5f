import { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { createApiApp } from '../../apps/api/src/create-api-app';
import { TestDatabase } from './test-database';

/**
 * The real API app in this process, on a private database, listening on a free port; `env` adds
 * to the environment it is configured from. One per test file: its metrics register once a process.
 */
export async function startApiApp(
  db: TestDatabase,
  secret: string,
  env: Record<string, string> = {},
): Promise<INestApplication> {
  const set = {
    NODE_ENV: 'test',
    DATABASE_URL: db.url,
    AUTH_JWT_SECRET: secret,
    LOG_LEVEL: 'silent',
    QUEUE_PREFIX: `api${randomUUID().slice(0, 8)}`,
    ...env,
  };
  Object.assign(process.env, set);
  try {
    const app = await createApiApp();
    await app.listen(0, '127.0.0.1');
    return app;
  } finally {
    for (const k of Object.keys(env)) delete process.env[k];
  }
}
