import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig, CONFIG } from '@parley/config';
import { ReadReplica } from './read-replica';

/** The primary's pool settings, shared by the replica's. */
function newPool(connectionString: string, application_name: string, connectionTimeoutMillis = 5_000): Pool {
  const pool = new Pool({
    connectionString,
    max: 20,
    application_name,
    // an unreachable server fails a request in seconds (a 503), never holds it open
    connectionTimeoutMillis,
  });
  pool.on('error', () => undefined); // an idle client's connection dropped: the pool replaces it
  return pool;
}

/**
 * One pg Pool per process, and the replica's pool for the reads it may serve (DATABASE_READ_URL).
 * The event store on the Pool is libs/event-store's EventStoreModule.
 */
@Global()
@Module({
  providers: [
    {
      provide: Pool,
      inject: [CONFIG],
      useFactory: (config: AppConfig) => newPool(config.databaseUrl, 'parley'),
    },
    {
      provide: ReadReplica,
      inject: [CONFIG, Pool],
      useFactory: (config: AppConfig, pool: Pool) =>
        // an unreachable replica is passed over for the primary: give up on it sooner than on the primary
        new ReadReplica(
          pool,
          config.databaseReadUrl ? newPool(config.databaseReadUrl, 'parley-reads', 1_000) : undefined,
        ),
    },
  ],
  exports: [Pool, ReadReplica],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @Inject(Pool) private readonly pool: Pool,
    private readonly reads: ReadReplica,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
    if (this.reads.configured) await this.reads.laggingPool.end();
  }
}
