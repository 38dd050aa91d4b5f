import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig, CONFIG } from '@parley/config';
import { AppendNotifier, EventStore } from '@parley/event-store';

/** One pg Pool per process, the event store on it, and the LISTEN connection for appends. */
@Global()
@Module({
  providers: [
    {
      provide: Pool,
      inject: [CONFIG],
      useFactory: (config: AppConfig) => {
        const pool = new Pool({
          connectionString: config.databaseUrl,
          max: 20,
          application_name: 'parley',
          // an unreachable server fails a request in seconds (a 503), never holds it open
          connectionTimeoutMillis: 5_000,
        });
        pool.on('error', () => undefined); // an idle client's connection dropped: the pool replaces it
        return pool;
      },
    },
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
  exports: [Pool, EventStore, AppendNotifier],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @Inject(Pool) private readonly pool: Pool,
    private readonly notifier: AppendNotifier,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.notifier.stop();
    await this.pool.end();
  }
}
