import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { Job, Queue } from 'bullmq';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { RedisConnections } from '@parley/platform';
import { announcePresence, presenceConnectionName, presentHolderOf, presentWorkers } from './worker-presence';

/** How often the active turns' lock holders are looked for among Redis' connections (their presence). */
export const ORPHAN_CHECK_MS = 250;
/**
 * How long a holder must stay missing before its turns are handed back: longer than a connection
 * takes to come back after a blip (ioredis reconnects after 50 ms), so a live worker keeps its
 * turns; short enough for a takeover within 1.5 s of a kill.
 */
export const ORPHAN_CONFIRM_MS = 500;
/**
 * After this process's own connection came back (a Redis restart, a Sentinel failover), every
 * other worker is reconnecting too: absences are not trusted for this long.
 */
export const RECONNECT_GRACE_MS = 5_000;

/**
 * Hands the turns of a worker that is gone back to the queue at once, instead of after their
 * locks' expiry and the stalled check after it. A worker killed with -9 leaves its locks behind
 * for their whole duration, but its connections to Redis close with it (the kernel closes the
 * sockets): a job whose lock holder's presence connection (worker-presence.ts) has been gone for
 * ORPHAN_CONFIRM_MS goes back to the head of the queue, its lock deleted.
 * A worker alive but slow, its event loop stalled by a loaded machine, keeps its connection and so
 * its turns: the lock's expiry (LOCK_MS) is only the net for a worker whose connection stays open
 * while it is stuck, or whose Redis cannot list its clients (CLIENT LIST refused: then nothing is
 * handed back here).
 */
@Injectable()
export class OrphanedLocks implements OnApplicationShutdown {
  private readonly logger = new Logger(OrphanedLocks.name);
  /** job id → the token found on its lock, and since when its holder has been missing */
  private missing = new Map<string, { token: string; since: number }>();
  private timer?: NodeJS.Timeout;
  private checking = false;
  /** when this process's own connection last came back: absences seen before it say nothing */
  private reconnectedAt = Number.NEGATIVE_INFINITY;

  constructor(
    @InjectQueue(AGENT_TURNS_QUEUE) private readonly queue: Queue,
    private readonly redis: RedisConnections,
  ) {}

  /** Opens this process's worker's presence connection (before it takes a job), then looks every ORPHAN_CHECK_MS. */
  async start(workerId: string): Promise<void> {
    await announcePresence(this.redis.open(presenceConnectionName(workerId)));
    // a 'ready' from now on is a reconnect (were it the first connection, it only delays the first look)
    this.redis.main.on('ready', () => (this.reconnectedAt = Date.now()));
    this.timer = setInterval(() => void this.tick(), ORPHAN_CHECK_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      for (const { jobId, holder } of await this.check())
        this.logger.warn(`handed ${jobId} back to the queue: its worker ${holder} has no connection to Redis`);
    } catch (e) {
      this.logger.warn(`looking for the locks of gone workers failed: ${(e as Error).message}`);
    } finally {
      this.checking = false;
    }
  }

  /** One look: the jobs handed back now (their lock holders missing since an earlier look). */
  async check(now = Date.now()): Promise<Array<{ jobId: string; holder: string }>> {
    if (now < this.reconnectedAt + RECONNECT_GRACE_MS) return [];
    const client = this.redis.main;
    const jobIds = await client.lrange(this.queue.keys.active, 0, -1);
    const lockKey = (jobId: string) => `${this.queue.toKey(jobId)}:lock`;
    const tokens = jobIds.length ? await client.mget(...jobIds.map(lockKey)) : [];
    const held = jobIds
      .map((jobId, i) => ({ jobId, token: tokens[i], holder: presentHolderOf(tokens[i]) }))
      .filter((h): h is { jobId: string; token: string; holder: string } => h.holder !== null);
    const live = held.length ? await presentWorkers(client) : null;
    // the holders missing now, each since the look that first found it missing with this token
    const missing = new Map<string, { token: string; since: number }>();
    const released: Array<{ jobId: string; holder: string }> = [];
    for (const { jobId, token, holder } of held) {
      if (!live || live.has(holder)) continue;
      const seen = this.missing.get(jobId);
      const since = seen?.token === token && seen.since > this.reconnectedAt ? seen.since : now;
      if (now - since < ORPHAN_CONFIRM_MS) missing.set(jobId, { token, since });
      else if (await this.handBack(jobId, token)) released.push({ jobId, holder });
    }
    this.missing = missing;
    return released;
  }

  /**
   * Moves the job back to the head of the queue, where a worker blocked on it takes it at once,
   * if its lock still holds the token it was found with (BullMQ's own script checks and deletes
   * it in the same step); false when it did not.
   */
  private async handBack(jobId: string, token: string): Promise<boolean> {
    const job = await Job.fromId(this.queue, jobId);
    if (!job) return false;
    return job.moveToWait(token).then(
      () => true,
      () => false, // the lock changed hands meanwhile (its worker finished or gave it back)
    );
  }
}
