import { Pool } from 'pg';
import { waitFor } from './wait-for';

/**
 * Waits until one statement of this database, its text containing `statement`, waits on a lock:
 * a test that holds a rival's row uncommitted knows then that the statement has met it.
 */
export async function untilWaitingOnLock(pool: Pool, statement: string, what: string): Promise<void> {
  await waitFor(what, async () => {
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND position($1 IN query) > 0`,
      [statement],
    );
    return rows[0].n === 1;
  });
}
