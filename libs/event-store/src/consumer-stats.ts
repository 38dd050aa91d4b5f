import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';

/** Where the log's consumers stand, for metrics: read from their checkpoint and dead-letter tables. */
@Injectable()
export class ConsumerStats {
  constructor(@Inject(Pool) private readonly pool: Pick<Pool, 'query'>) {}

  /**
   * Log positions between the head and each consumer's checkpoint. Two index lookups, not a count
   * over the unprocessed events, which grows with the lag itself; positions a rolled-back append
   * skipped count too, so this is an upper bound.
   */
  async lag(): Promise<Array<{ consumer: string; lag: number }>> {
    const { rows } = await this.pool.query<{ consumer: string; lag: string }>(
      `SELECT c.consumer, greatest(h.head - c.position, 0) AS lag
         FROM consumer_checkpoints c, (SELECT coalesce(max(position), 0) AS head FROM events) h`,
    );
    return rows.map((r) => ({ consumer: r.consumer, lag: Number(r.lag) }));
  }

  /** How many events each consumer gave up on. */
  async deadLetters(): Promise<Array<{ consumer: string; count: number }>> {
    const { rows } = await this.pool.query<{ consumer: string; n: string }>(
      'SELECT consumer, count(*) AS n FROM consumer_dead_letters GROUP BY consumer',
    );
    return rows.map((r) => ({ consumer: r.consumer, count: Number(r.n) }));
  }
}
