import { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { isTransientDbError } from './transient-errors';

/**
 * Runs `use` on a client the pool lends, and hands it back, or has it discarded when its
 * connection failed: an 'error' event meanwhile, or an error of `use` that `breaks` says broke
 * it. A lent client has no error listener of the pool's, so a connection the server ends between
 * two queries (a restart: 57P01) would be an unhandled 'error' event and kill the process: it is
 * listened for here. `failed()` tells `use` whether the connection has failed so far.
 */
async function onLentClient<T>(
  pool: Pool,
  breaks: (e: unknown) => boolean,
  use: (client: PoolClient, failed: () => boolean) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (e: Error) => (broken = e);
  client.on('error', onError);
  try {
    return await use(client, () => broken !== undefined);
  } catch (e) {
    if (breaks(e)) broken ??= e as Error;
    throw e;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/**
 * Runs `work` in one transaction on a pooled client: commit on success, rollback on any error
 * (not on a connection that failed: it is discarded).
 */
export function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return onLentClient(pool, isTransientDbError, async (client, failed) => {
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (e) {
      if (!failed() && !isTransientDbError(e)) await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
  });
}

/**
 * One statement on a pooled client, like `pool.query`, except that a statement the server refused
 * (a lost race's unique violation, say) hands its connection back for reuse: pg-pool's `query`
 * closes the connection on any error, and a new one costs Postgres a process and every prepared
 * statement. A connection that failed (or any error without the server's SQLSTATE) is discarded.
 */
export function queryKeepingConnection<R extends QueryResultRow>(
  pool: Pool,
  config: QueryConfig,
): Promise<QueryResult<R>> {
  return onLentClient(
    pool,
    (e) => !refusedByServer(e),
    (client) => client.query<R>(config),
  );
}

/** An error the server answered a statement with, on a connection that is still good. */
function refusedByServer(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !isTransientDbError(e);
}
