import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig, CONFIG } from '@parley/config';
import { conversationIdOf } from '@parley/conversation';
import { RedisConnections } from '@parley/platform';
import { TurnSequencer } from './turn-sequencer';

const SWEEP_EVERY_MS = 30_000;
const LOOKBACK = '7 days';

/**
 * Re-enqueues turns that have no ending in the log and no job in Redis: the dispatcher's
 * checkpoint may be past them while Redis lost its queue (a restart without persistence).
 * Runs at boot, every 30 s, and whenever the Redis connection comes back. Enqueueing is by
 * job id, so any number of workers may sweep at once.
 */
@Injectable()
export class TurnSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(TurnSweeper.name);
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<number>;

  constructor(
    @Inject(Pool) private readonly pool: Pool,
    private readonly sequencer: TurnSequencer,
    private readonly redis: RedisConnections,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.worker.dispatcherEnabled) return;
    this.timer = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.redis.main.on('ready', () => void this.sweep());
    void this.sweep();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Returns how many turns were enqueued again. */
  sweep(): Promise<number> {
    this.sweeping ??= this.sweepOnce()
      .catch((e: Error) => {
        this.logger.warn(`sweep failed: ${e.message}`);
        return 0;
      })
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepOnce(): Promise<number> {
    const { rows } = await this.pool.query<{ stream_id: string; turn_id: string }>(
      `SELECT p.stream_id, p.data->>'turnId' AS turn_id
         FROM events p
        WHERE p.type = 'UserMessagePosted' AND p.occurred_at > now() - $1::interval
          AND NOT EXISTS (SELECT 1 FROM events e
                           WHERE e.stream_id = p.stream_id AND e.data->>'turnId' = p.data->>'turnId'
                             AND e.type IN ('AssistantReplied', 'TurnFailed', 'TurnCancelled'))
          AND NOT EXISTS (SELECT 1 FROM events d WHERE d.stream_id = p.stream_id AND d.type = 'ConversationDeleted')
        ORDER BY p.position`,
      [LOOKBACK],
    );
    let enqueued = 0;
    for (const r of rows) {
      const conversationId = conversationIdOf(r.stream_id);
      if (conversationId && (await this.sequencer.ensureQueued(conversationId, r.turn_id))) enqueued++;
    }
    if (enqueued) this.logger.log(`re-enqueued ${enqueued} unanswered turn(s)`);
    return enqueued;
  }
}
