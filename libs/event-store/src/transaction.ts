import { Pool, PoolClient } from 'pg';
import { isTransientDbError } from './transient-errors';

/**
 * Runs `work` in one transaction on a pooled client: commit on success, rollback on any error.
 * A checked-out client has no error listener of the pool's, so a connection the server ends
 * between two queries (a restart: 57P01) would be an unhandled 'error' event and kill the
 * process: listen for it here, and hand a broken client back to be discarded, not reused.
 */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (e: Error) => (broken = e);
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (e) {
    if (isTransientDbError(e)) broken ??= e as Error;
    if (!broken) await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
