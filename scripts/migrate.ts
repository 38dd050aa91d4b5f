/**
 * `npm run migrate`: creates the database named in DATABASE_URL when it is missing, then applies
 * migrations/ with node-pg-migrate (idempotent: applied files are recorded in pgmigrations).
 */
import path from 'node:path';
import { Client } from 'pg';
import { runner } from 'node-pg-migrate';
import { loadDatabaseUrl } from '../libs/config/src';
import { projectRoot } from '../libs/platform/src/project-root';

export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((e: { code?: string }) => {
        if (e.code !== '42P04') throw e; // created by a concurrent migrate
      });
    }
  } finally {
    await admin.end();
  }
}

export async function migrate(databaseUrl: string, log: (msg: string) => void = () => undefined): Promise<void> {
  await ensureDatabase(databaseUrl);
  await runner({
    databaseUrl,
    dir: path.join(projectRoot(), 'migrations'),
    migrationsTable: 'pgmigrations',
    direction: 'up',
    checkOrder: true,
    log,
    logger: { info: log, warn: log, error: log, debug: () => undefined },
  } as Parameters<typeof runner>[0]);
}

if (require.main === module) {
  migrate(loadDatabaseUrl(), (m) => console.log(m)).then(
    () => console.log('migrations applied'),
    (e: Error) => {
      console.error(`migrate failed: ${e.message}`);
      process.exit(1);
    },
  );
}
