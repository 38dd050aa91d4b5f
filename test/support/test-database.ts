import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import { JOURNAL_DATABASE_SUFFIX } from '../../libs/erasure/src/journal-database';

/** A private database for one test file, cloned from the migrated template of this run. */
export interface TestDatabase {
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

function adminUrl(): URL {
  const tpl = process.env.PARLEY_TEST_TEMPLATE_URL;
  if (!tpl) throw new Error('PARLEY_TEST_TEMPLATE_URL is unset: run tests through jest (test/support/global-setup.ts)');
  const u = new URL(tpl);
  u.pathname = '/postgres';
  return u;
}

/** `empty`: a blank database (template0), as an operator creates one to restore a dump into. */
export async function createTestDatabase({ empty = false }: { empty?: boolean } = {}): Promise<TestDatabase> {
  const admin = adminUrl();
  const template = empty ? 'template0' : new URL(process.env.PARLEY_TEST_TEMPLATE_URL!).pathname.slice(1);
  const name = `parley_t${process.env.PARLEY_TEST_RUN}_${randomBytes(5).toString('hex')}`;
  const c = new Client({ connectionString: admin.toString() });
  await c.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
        break;
      } catch (e) {
        // another file is cloning the same template at this instant: wait and retry
        if (attempt > 20 || !/being accessed by other users/.test(String(e))) throw e;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await c.end();
  }
  const url = new URL(admin.toString());
  url.pathname = `/${name}`;
  const pool = new Pool({ connectionString: url.toString(), max: 20 });
  pool.on('error', () => undefined); // DROP DATABASE … WITH (FORCE) ends idle clients at teardown
  return {
    url: url.toString(),
    pool,
    drop: async () => {
      // a test that leaked a checked-out client must not hang the teardown
      await Promise.race([pool.end().catch(() => undefined), new Promise((r) => setTimeout(r, 2_000).unref())]);
      const d = new Client({ connectionString: admin.toString() });
      await d.connect();
      // and the erasure journal its API and workers made beside it (libs/erasure, journal-database.ts)
      for (const db of [name, `${name}${JOURNAL_DATABASE_SUFFIX}`])
        await d.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`).catch(() => undefined);
      await d.end();
    },
  };
}

export const redisUrl = (): string => process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
