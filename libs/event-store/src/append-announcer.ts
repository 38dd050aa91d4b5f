import { escapeLiteral, Pool } from 'pg';
import { announcementOf } from './announcement';

/** The channel appends are announced on; the payload is an Announcement (announcement.ts). */
export const EVENTS_CHANNEL = 'parley_events';

/**
 * Announces committed appends to listeners in every process (AppendNotifier), after the commit and
 * outside the appending transaction. A transaction with a pending NOTIFY holds a database-wide
 * lock through its commit (Postgres' async.c queues notifications in commit order), so a NOTIFY
 * inside each append made every append wait for every other's fsync: 16 writers committed at the
 * speed of one. Here the appends commit freely and the announcements of one process go out
 * coalesced, one round trip at a time for all streams appended meanwhile. Its transaction gets a
 * transaction id (Postgres gives one to every NOTIFY) and would wait for its own WAL flush; it
 * skips that wait (synchronous_commit off), as an announcement lost in a crash loses no event:
 * readers also poll, and announcements are only a wake-up. These carry each stream's version but
 * not the events: under concurrent appends, notifications with the events in them made every
 * commit of this one hold the notify lock longer (appends/s, 16 writers: 5,811 → 5,123), so
 * their listeners read instead.
 */
export class AppendAnnouncer {
  /** the version each stream appended to meanwhile has reached */
  private pending = new Map<string, number>();
  private flushing?: Promise<void>;

  constructor(private readonly pool: Pool) {}

  announce(streamId: string, version: number): void {
    this.pending.set(streamId, Math.max(version, this.pending.get(streamId) ?? 0));
    this.flushing ??= this.flush();
  }

  /** Resolves when everything announced so far has been sent (or failed to be). */
  async settled(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.size > 0) {
        const payloads = [...this.pending].map(([streamId, version]) => announcementOf(streamId, version));
        this.pending = new Map();
        await this.send(payloads).catch(() => undefined);
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** A failed announcement may leave its transaction open: that connection is discarded, not reused. */
  private async send(payloads: string[]): Promise<void> {
    const client = await this.pool.connect();
    let failed: Error | undefined;
    try {
      await client.query(announcement(payloads));
    } catch (e) {
      failed = e as Error;
    } finally {
      client.release(failed);
    }
  }
}

/** One simple-protocol query (several statements, so no parameters: the values are escaped). */
function announcement(payloads: string[]): string {
  const literals = payloads.map(escapeLiteral).join(', ');
  return `BEGIN; SET LOCAL synchronous_commit TO off;
    SELECT pg_notify(${escapeLiteral(EVENTS_CHANNEL)}, p) FROM unnest(ARRAY[${literals}]::text[]) AS p;
    COMMIT;`;
}
