import { Inject, Logger, Module, OnApplicationShutdown, Optional } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { BOOK_INGEST_QUEUE, BooksModule } from '@parley/books';
import { AppConfig, CONFIG } from '@parley/config';
import { ErasureJournal } from './erasure-journal';
import { ConversationEraser } from './conversation-eraser';
import { Erasures } from './erasures';
import { openErasureJournal } from './open-erasure-journal';

/**
 * Erasure for the API's deletes and the worker's sweep. Needs the global DatabaseModule, the
 * app's RepositoriesModule and a BullMQ root. The erasure journal is ERASURE_JOURNAL_URL's database, else `<db>_erasure_journal`
 * beside DATABASE_URL (see openErasureJournal).
 */
@Module({
  imports: [BooksModule, BullModule.registerQueue({ name: AGENT_TURNS_QUEUE }, { name: BOOK_INGEST_QUEUE })],
  providers: [
    Erasures,
    ConversationEraser,
    {
      provide: ErasureJournal,
      inject: [CONFIG],
      useFactory: (config: AppConfig): Promise<ErasureJournal | null> => {
        const log = new Logger(ErasureJournal.name);
        return openErasureJournal(
          { databaseUrl: config.databaseUrl, journalUrl: config.erasureJournalUrl },
          (message) => log.warn(message),
        );
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
