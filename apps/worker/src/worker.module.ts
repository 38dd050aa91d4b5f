import { Module } from '@nestjs/common';
import { ConfigModule } from '@parley/config';
import { DatabaseModule, loggerModule, RedisModule } from '@parley/platform';

/** The worker root: no HTTP port; processors, projections and the dispatcher. */
@Module({
  imports: [ConfigModule, loggerModule('worker'), DatabaseModule, RedisModule],
})
export class WorkerModule {}
