import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig, CONFIG } from '@parley/config';
import { ConversationLogQueries } from '@parley/read-models';
import { RedisConnections } from '@parley/platform';
import { TurnSequencer } from './turn-sequencer';
import { BatchCompleter } from './batch-completer';

const SWEEP_EVERY_MS = 30_000;
/** how far back a sweep looks at boot and when Redis comes back (it may have lost every job) */
export const FULL_LOOKBACK = '7 days';
/**
 * how far back the periodic sweep looks: what it is there for is recent (a job that gave up while
 * the database was away), and its cost is the posts in the window, so a week's would cost a busy
 * service seconds every 30 s
 */
export const PERIODIC_LOOKBACK = '1 hour';

/**
 * Re-enqueues turns that have no ending in the log and no job in Redis: the dispatcher's
 * checkpoint may be past them while Redis lost its queue (a restart without persistence).
 * Runs at boot and whenever the Redis connection comes back (over the last week), and every
 * 30 s (over the last hour). It also completes batches whose last turn ended without it. Enqueueing is by job id, so any number of workers may sweep at once.
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
    private readonly batches: BatchCompleter,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.worker.dispatcherEnabled) return;
    this.timer = setInterval(() => void this.sweep(PERIODIC_LOOKBACK), SWEEP_EVERY_MS);
    this.redis.main.on('ready', () => void this.sweep(FULL_LOOKBACK));
    void this.sweep(FULL_LOOKBACK);
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Returns how many turns were enqueued again. */
  sweep(lookback = FULL_LOOKBACK): Promise<number> {
    this.sweeping ??= this.sweepOnce(lookback)
      .catch((e: Error) => {
        this.logger.warn(`sweep failed: ${e.message}`);
        return 0;
      })
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepOnce(lookback: string): Promise<number> {
    let enqueued = 0;
    for (const t of await this.log.unendedTurns(lookback)) {
      if (await this.sequencer.ensureQueued(t.conversationId, t.turnId)) enqueued++;
    }
    if (enqueued) this.logger.log(`re-enqueued ${enqueued} unanswered turn(s)`);
    // batches whose last turn ended on a worker that died before completing them
    for (const b of await this.log.unfinishedBatches(lookback)) await this.batches.check(b.conversationId, b.batchId);
    return enqueued;
  }
}
