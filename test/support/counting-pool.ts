import { Pool, PoolClient } from 'pg';

const textOf = (q: string | { text: string }) => (typeof q === 'string' ? q : q.text);

/**
 * The pool, with the text of every statement sent through it recorded (by `query`, or on a client
 * it lends): for tests that count round trips.
 */
export function countingPool(pool: Pool): { pool: Pool; statements: string[] } {
  const statements: string[] = [];
  const counting = Object.create(pool) as Pool;
  counting.query = ((q: string | { text: string }, ...rest: unknown[]) => {
    statements.push(textOf(q));
    return (pool.query as (...a: unknown[]) => unknown)(q, ...rest);
  }) as Pool['query'];
  counting.connect = (async () => {
    const client = await pool.connect();
    const { query, release } = client;
    // counted while lent, as it was before once back in the pool
    client.query = ((q: string | { text: string }, ...rest: unknown[]) => {
      statements.push(textOf(q));
      return (query as (...a: unknown[]) => unknown).call(client, q, ...rest);
    }) as PoolClient['query'];
    client.release = (err?: Error | boolean) => {
      Object.assign(client, { query, release });
      return release.call(client, err);
    };
    return client;
  }) as Pool['connect'];
  return { pool: counting, statements };
}
