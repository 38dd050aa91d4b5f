import { Module } from '@nestjs/common';
import { Pool } from 'pg';
import { ReadReplica } from '@parley/platform';
import { ConversationLogQueries } from './conversation-log.queries';
import { ReadModelQueries } from './read-model.queries';

/** The query objects over the read models and the log, built once on the process's pools and injected. */
@Module({
  providers: [
    // read models may come from the replica (DATABASE_READ_URL) once it has replayed the primary's position
    {
      provide: ReadModelQueries,
      inject: [ReadReplica],
      useFactory: (reads: ReadReplica) => new ReadModelQueries(() => reads.currentPool()),
    },
    { provide: ConversationLogQueries, inject: [Pool], useFactory: (pool: Pool) => new ConversationLogQueries(pool) },
  ],
  exports: [ReadModelQueries, ConversationLogQueries],
})
export class ReadModelsModule {}
