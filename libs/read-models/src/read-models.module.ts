import { Module } from '@nestjs/common';
import { Pool } from 'pg';
import { ConversationLogQueries } from './conversation-log.queries';
import { ReadModelQueries } from './read-model.queries';

/** The query objects over the read models and the log, built once on the process's pool and injected. */
@Module({
  providers: [
    { provide: ReadModelQueries, inject: [Pool], useFactory: (pool: Pool) => new ReadModelQueries(pool) },
    { provide: ConversationLogQueries, inject: [Pool], useFactory: (pool: Pool) => new ConversationLogQueries(pool) },
  ],
  exports: [ReadModelQueries, ConversationLogQueries],
})
export class ReadModelsModule {}
