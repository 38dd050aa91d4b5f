import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig, CONFIG } from '@parley/config';
import { Erasures } from '@parley/erasure';

/**
 * Finishes what an erasure could not do at once (docs/erasure.md): removes the Redis jobs that
 * were running when their conversation was erased, erases conversations that a release before
 * erasure only deleted (at the first boot after the upgrade), and drops late fold snapshots.
 * Every worker sweeps; each step is safe to run twice at once.
 */
@Injectable()
export class ErasureSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ErasureSweeper.name);
  private timer?: NodeJS.Timeout;
  private sweeping = false;

  constructor(
    private readonly erasures: Erasures,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

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
      const { erased, lateForks, lateSnapshots } = await this.erasures.sweep();
      if (erased > 0) this.logger.log(`erased ${erased} conversation(s) deleted before erasure existed`);
      if (lateForks > 0) this.logger.log(`erased ${lateForks} fork(s) made while a book or account erasure ran`);
      if (lateSnapshots > 0) this.logger.log(`removed ${lateSnapshots} fold snapshot(s) saved after an erasure`);
    } catch (e) {
      this.logger.warn(
        `erasure sweep failed, trying again in ${this.config.worker.erasureSweepMs} ms: ${(e as Error).message}`,
      );
    } finally {
      this.sweeping = false;
    }
  }
}
