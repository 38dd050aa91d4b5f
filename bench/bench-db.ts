/** What the benchmarks share: a scratch database made afresh, and percentiles. */
import { Client } from 'pg';
import { migrate } from '../scripts/migrate';

/** The p-th percentile (nearest rank) of ascending values. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Drops the database of `url` (closing its connections) and creates it migrated. */
export async function recreateDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  const name = decodeURIComponent(admin.pathname.slice(1));
  admin.pathname = '/postgres';
  const c = new Client({ connectionString: admin.toString() });
  await c.connect();
  try {
    // with the erasure journal beside it: a journal of an earlier run would be replayed into the new database
    for (const db of [name, `${name}_erasure_journal`])
      await c.query(`DROP DATABASE IF EXISTS "${db.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await c.end();
  }
  await migrate(url);
}
