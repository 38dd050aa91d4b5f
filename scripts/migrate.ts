/**
 * `npm run migrate`: creates the database named in DATABASE_URL when it is missing, then applies
 * migrations/ with node-pg-migrate (idempotent: applied files are recorded in pgmigrations).
 */
// first: refuse a Node.js older than package.json's engines, with what to do
import '../libs/platform/src/supported-node';
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

/**
 * How long a migration's statement waits for a table lock before it fails (and the migration
 * with it, to be run again): a schema change queued behind a long transaction would otherwise
 * hold up every append and read behind it while the old release serves (docs/operations.md).
 */
const LOCK_TIMEOUT = '5s';

/**
 * node-pg-migrate's note on a migration run outside a transaction: ours that do (an index built
 * CONCURRENTLY) say so themselves and are safe to run again, so a first start stays quiet.
 */
const NO_TRANSACTION_NOTE = /This migration is not wrapped in a transaction/;

/**
 * Applies the pending migrations, each in its own transaction (one spanning them all would hold
 * every lock it took until the last one ends), with a lock timeout.
 */
export async function migrate(databaseUrl: string, log: (msg: string) => void = () => undefined): Promise<void> {
  await ensureDatabase(databaseUrl);
  const dbClient = new Client({ connectionString: databaseUrl });
  await dbClient.connect();
  try {
    await dbClient.query(`SET lock_timeout = '${LOCK_TIMEOUT}'`);
    await runner({
      dbClient,
      dir: path.join(projectRoot(), 'migrations'),
      migrationsTable: 'pgmigrations',
      direction: 'up',
      checkOrder: true,
      singleTransaction: false,
      log,
      logger: {
        info: log,
        warn: (m: string) => !NO_TRANSACTION_NOTE.test(m) && log(m),
        error: log,
        debug: () => undefined,
      },
    } as Parameters<typeof runner>[0]);
  } finally {
    await dbClient.end();
  }
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
