import { Pool, PoolClient } from 'pg';

/** The first key of the two-key advisory locks consumers lead by (the second is the consumer's name hashed). */
const CONSUMER_LOCK_SPACE = 0x7061726c; // "parl"

/**
 * One runner of a consumer at a time across processes: a session advisory lock, held on a
 * connection of its own for as long as this process leads. Others try again each poll; a leader
 * that dies loses its connection and with it the lock. Without it every worker's runner read each
 * batch and wrote it, and all but one write lost the checkpoint race (work thrown away, and the
 * losers forgot what they kept in memory). The checkpoint's compare-and-set still guards every
 * batch, so two leaders for a moment (a dead connection the server has not noticed yet) apply
 * nothing twice.
 */
export class ConsumerLease {
  private client?: PoolClient;

  constructor(
    private readonly pool: Pool,
    private readonly consumer: string,
  ) {}

  /** Whether this process leads; takes the lease when it is free. */
  async held(): Promise<boolean> {
    if (this.client) return true;
    const client = await this.pool.connect();
    let leads = false;
    try {
      const { rows } = await client.query<{ leads: boolean }>(
        'SELECT pg_try_advisory_lock($1, hashtext($2)) AS leads',
        [CONSUMER_LOCK_SPACE, this.consumer],
      );
      leads = rows[0].leads;
    } finally {
      if (!leads) client.release();
    }
    if (!leads) return false;
    this.client = client;
    // the connection broke: the server let the lock go with it
    client.once('error', () => this.release());
    return true;
  }

  /** Gives the lease up by closing its connection, which is what surely ends a session lock. */
  release(): void {
    const client = this.client;
    this.client = undefined;
    client?.release(true);
  }
}
