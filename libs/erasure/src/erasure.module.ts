import { Inject, Logger, Module, OnApplicationShutdown, Optional } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { BOOK_INGEST_QUEUE, BooksModule } from '@parley/books';
import { AppConfig, CONFIG } from '@parley/config';
import { ErasureJournal } from './erasure-journal';
import { Erasures } from './erasures';

/**
 * Erasure for the API's deletes and the worker's sweep. Needs the global DatabaseModule and a
 * BullMQ root. The erasure journal is on when ERASURE_JOURNAL_URL is set.
 */
@Module({
  imports: [BooksModule, BullModule.registerQueue({ name: AGENT_TURNS_QUEUE }, { name: BOOK_INGEST_QUEUE })],
  providers: [
    Erasures,
    {
      provide: ErasureJournal,
      inject: [CONFIG],
      useFactory: (config: AppConfig): ErasureJournal | null => {
        if (config.erasureJournalUrl) return ErasureJournal.connect(config.erasureJournalUrl);
        new Logger(ErasureJournal.name).warn(
          'ERASURE_JOURNAL_URL is unset: erasures are not journaled, so restoring a backup brings back ' +
            'what was erased after it was taken (docs/operations.md, "Backups and restores")',
        );
        return null;
      },
    },
  ],
  exports: [Erasures],
})
export class ErasureModule implements OnApplicationShutdown {
  constructor(@Optional() @Inject(ErasureJournal) private readonly journal: ErasureJournal | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.journal?.end();
  }
}
