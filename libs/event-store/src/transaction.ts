import { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
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

/**
 * One statement on a pooled client, like `pool.query`, except that a statement the server refused
 * (a lost race's unique violation, say) hands its connection back for reuse: pg-pool's `query`
 * closes the connection on any error, and a new one costs Postgres a process and every prepared
 * statement. A connection that failed (or any error without the server's SQLSTATE) is discarded.
 */
export async function queryKeepingConnection<R extends QueryResultRow>(
  pool: Pool,
  config: QueryConfig,
): Promise<QueryResult<R>> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (e: Error) => (broken = e);
  client.on('error', onError);
  try {
    return await client.query<R>(config);
  } catch (e) {
    if (!refusedByServer(e)) broken ??= e as Error;
    throw e;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/** An error the server answered a statement with, on a connection that is still good. */
function refusedByServer(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !isTransientDbError(e);
}
