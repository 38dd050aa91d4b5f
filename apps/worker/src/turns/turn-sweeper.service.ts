import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig, CONFIG } from '@parley/config';
import { ConversationLogQueries } from '@parley/read-models';
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
    private readonly log: ConversationLogQueries,
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
    let enqueued = 0;
    for (const t of await this.log.unendedTurns(LOOKBACK)) {
      if (await this.sequencer.ensureQueued(t.conversationId, t.turnId)) enqueued++;
    }
    if (enqueued) this.logger.log(`re-enqueued ${enqueued} unanswered turn(s)`);
    return enqueued;
  }
}
