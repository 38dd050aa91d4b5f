import { Queue } from 'bullmq';
import { Pool } from 'pg';
import { Gauge, register } from 'prom-client';
import { ConsumerStats } from '@parley/event-store';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { MetricsService } from '../../apps/api/src/metrics/metrics.service';
import { createTestDatabase, redisUrl, TestDatabase } from '../support/test-database';

const LOG_SIZE = 20_000;

describe(MetricsService.name, () => {
  let db: TestDatabase;
  let queue: Queue;
  /** every statement the service sends to Postgres, to look at what it costs */
  const sent: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    queue = new Queue(AGENT_TURNS_QUEUE, { connection: { url: redisUrl() } });
    const recording = new Proxy(db.pool, {
      get: (pool, key) =>
        key === 'query'
          ? (...args: Parameters<Pool['query']>) => {
              sent.push(typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text);
              return (pool.query as (...a: unknown[]) => unknown)(...args);
            }
          : Reflect.get(pool, key),
    });
    new MetricsService(queue, new ConsumerStats(recording));
  });
  afterAll(async () => {
    await queue.close();
    await db.drop();
  });

  /** Rows the plan of `sql` actually read from the events table. */
  async function eventRowsRead(sql: string): Promise<number> {
    const { rows } = await db.pool.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`);
    type PlanNode = { 'Relation Name'?: string; 'Actual Rows': number; 'Actual Loops': number; Plans?: PlanNode[] };
    const sum = (n: PlanNode): number =>
      (n['Relation Name'] === 'events' ? n['Actual Rows'] * n['Actual Loops'] : 0) +
      (n.Plans ?? []).reduce((s, c) => s + sum(c), 0);
    return sum(rows[0]['QUERY PLAN'][0].Plan);
  }

  it('reports consumer lag from the log head and the checkpoint, without counting the log', async () => {
    await db.pool.query(
      `INSERT INTO events (event_id, stream_id, version, type, data)
       SELECT gen_random_uuid(), 'lag-' || g, 1, 'Something', '{}' FROM generate_series(1, $1::int) g`,
      [LOG_SIZE],
    );
    await db.pool.query('VACUUM ANALYZE events');
    const { rows } = await db.pool.query<{ head: string; done: string }>(
      'SELECT max(position) AS head, min(position) + 999 AS done FROM events',
    );
    const head = Number(rows[0].head);
    const done = Number(rows[0].done);
    await db.pool.query(
      `INSERT INTO consumer_checkpoints (consumer, position) VALUES ('behind', $1), ('caught-up', $2)`,
      [done, head],
    );

    sent.length = 0;
    const lag = await (register.getSingleMetric('parley_consumer_lag_events') as Gauge).get();
    expect(Object.fromEntries(lag.values.map((v) => [v.labels.consumer, v.value]))).toEqual({
      behind: head - done,
      'caught-up': 0,
    });
    const lagQueries = sent.filter((q) => /consumer_checkpoints/.test(q));
    expect(lagQueries).toHaveLength(1);
    // index lookups: a handful of rows, however long the log and however far behind the consumer
    expect(await eventRowsRead(lagQueries[0])).toBeLessThan(10);
  });
});
