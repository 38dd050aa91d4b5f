import { Module } from '@nestjs/common';
import { ReadReplica } from '@parley/platform';
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
  ],
  // ConversationLogQueries, on the primary's pool, is one of the apps' shared repositories (RepositoriesModule)
  exports: [ReadModelQueries],
})
export class ReadModelsModule {}
