import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { AppConfig, CONFIG } from '@parley/config';
import { Erasures } from '@parley/erasure';

/**
 * Finishes what an erasure could not do at once (docs/erasure.md): removes the Redis jobs that
 * were running when their conversation was erased, erases conversations that a release before
 * erasure only deleted (at the first boot after the upgrade), drops late fold snapshots, and
 * journals erasures the journal was away for. At start, before any turn is dispatched, it erases
 * again what the erasure journal holds and the database does not (a restored backup); a replay
 * that failed (the journal away) is tried again at each sweep until it succeeds.
 * Every worker sweeps; each step is safe to run twice at once.
 */
@Injectable()
export class ErasureSweeper implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ErasureSweeper.name);
  private timer?: NodeJS.Timeout;
  private sweeping = false;
  private replayed: boolean;

  constructor(
    private readonly erasures: Erasures,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {
    this.replayed = !erasures.journaling;
  }

  /** Init hooks all end before the first bootstrap hook: no turn or projection starts before the replay. */
  async onModuleInit(): Promise<void> {
    if (!this.replayed) await this.replay();
  }

  onApplicationBootstrap(): void {
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), this.config.worker.erasureSweepMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      if (!this.replayed) await this.replay();
      const { erased, lateForks, lateSnapshots, journaled, withdrawn } = await this.erasures.sweep();
      if (erased > 0) this.logger.log(`erased ${erased} conversation(s) deleted before erasure existed`);
      if (lateForks > 0) this.logger.log(`erased ${lateForks} fork(s) made while a book or account erasure ran`);
      if (lateSnapshots > 0) this.logger.log(`removed ${lateSnapshots} fold snapshot(s) saved after an erasure`);
      if (journaled > 0) this.logger.log(`journaled ${journaled} erasure(s) not yet in the erasure journal`);
      if (withdrawn > 0) this.logger.log(`withdrew ${withdrawn} catalogue book(s) whose withdrawal a crash broke off`);
    } catch (e) {
      this.logger.warn(
        `erasure sweep failed, trying again in ${this.config.worker.erasureSweepMs} ms: ${(e as Error).message}`,
      );
    } finally {
      this.sweeping = false;
    }
  }

  private async replay(): Promise<void> {
    try {
      const { entries, replayed } = await this.erasures.replayJournal((r) =>
        this.logger.log(
          r.skipped
            ? `erasure ${r.entry.id} (${r.entry.subject} ${r.entry.subjectId}) not replayed: ${r.skipped}`
            : `erased again from the journal: ${r.entry.subject} ${r.entry.subjectId} (erasure ${r.entry.id}): ` +
                `${r.conversations} conversation(s), ${r.books} book(s)`,
        ),
      );
      this.replayed = true;
      this.logger.log(`erasure journal: ${entries} erasure(s), ${replayed.length} erased again in this database`);
    } catch (e) {
      this.logger.error(`erasure journal replay failed, trying again at the next sweep: ${(e as Error).message}`);
    }
  }
}
