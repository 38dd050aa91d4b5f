import { Pool } from 'pg';

/** The pool, with the text of every statement sent through it recorded: for tests that count round trips. */
export function countingPool(pool: Pool): { pool: Pool; statements: string[] } {
  const statements: string[] = [];
  const counting = Object.create(pool) as Pool;
  counting.query = ((q: string | { text: string }, ...rest: unknown[]) => {
    statements.push(typeof q === 'string' ? q : q.text);
    return (pool.query as (...a: unknown[]) => unknown)(q, ...rest);
  }) as Pool['query'];
  return { pool: counting, statements };
}
