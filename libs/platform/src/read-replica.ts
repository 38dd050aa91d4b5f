import { Pool } from 'pg';

/** How long a read waits for the replica to replay the primary's position before it goes to the primary. */
export const REPLICA_WAIT_MS = 200;

/**
 * Reads that a Postgres streaming replica (DATABASE_READ_URL) may serve, and the rule that keeps
 * them honest: a reader that must see every write committed before its request (a history page
 * right after a post) gets the replica only once the replica has replayed the primary's current
 * WAL position, and the primary otherwise; a reader that checks what it reads by version (an SSE
 * catch-up) takes the replica as it is and reads what it lacks from the primary. Without a
 * replica, both are the primary. A replica that fails a read is skipped, never an error.
 */
export class ReadReplica {
  constructor(
    private readonly primary: Pool,
    private readonly replica?: Pool,
    private readonly maxWaitMs = REPLICA_WAIT_MS,
  ) {}

  get configured(): boolean {
    return this.replica !== undefined;
  }

  /** The replica as it is (it may lag), for readers that fill what it lacks from `primaryPool`. */
  get laggingPool(): Pool {
    return this.replica ?? this.primary;
  }

  get primaryPool(): Pool {
    return this.primary;
  }

  /** A pool that shows every write committed before this call: the replica once caught up, else the primary. */
  async currentPool(): Promise<Pool> {
    if (!this.replica) return this.primary;
    const { rows } = await this.primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
    const target = rows[0].lsn;
    const deadline = Date.now() + this.maxWaitMs;
    for (let pause = 5; ; pause *= 2) {
      // a replica that does not answer in time (a dropped link holds a connect for seconds) counts as behind
      const inTime = new Promise<false>((r) => setTimeout(() => r(false), Math.max(0, deadline - Date.now())).unref());
      if (await Promise.race([this.replayedTo(target), inTime])) return this.replica;
      if (Date.now() + pause > deadline) return this.primary;
      await new Promise((r) => setTimeout(r, pause));
    }
  }

  private async replayedTo(lsn: string): Promise<boolean> {
    try {
      const { rows } = await this.replica!.query<{ ok: boolean | null }>(
        'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok',
        [lsn],
      );
      return rows[0].ok === true; // null: not a replica (or replay not started): do not trust it
    } catch {
      return false; // the replica is away: the primary serves
    }
  }
}
