import { Global, Module, OnApplicationShutdown } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig, CONFIG } from '@parley/config';
import { AppendNotifier } from './append-notifier';
import { EventStore } from './event-store';

/**
 * The event store on the process's pg Pool, and the LISTEN connection for appends (opened while
 * something in the process listens for them). Needs the global DatabaseModule (the Pool) and
 * ConfigModule.
 */
@Global()
@Module({
  providers: [
    { provide: EventStore, inject: [Pool], useFactory: (pool: Pool) => new EventStore(pool) },
    {
      provide: AppendNotifier,
      inject: [CONFIG],
      useFactory: async (config: AppConfig) => {
        const notifier = new AppendNotifier(config.databaseUrl);
        await notifier.start();
        return notifier;
      },
    },
  ],
  exports: [EventStore, AppendNotifier],
})
export class EventStoreModule implements OnApplicationShutdown {
  constructor(private readonly notifier: AppendNotifier) {}

  async onApplicationShutdown(): Promise<void> {
    await this.notifier.stop();
  }
}
