import { Module } from '@nestjs/common';
import { ConfigModule } from '@parley/config';
import { DatabaseModule, loggerModule, RedisModule } from '@parley/platform';
import { ProjectionsService } from './projections/projections.service';

/** The worker root: no HTTP port; processors, projections and the dispatcher. */
@Module({
  imports: [ConfigModule, loggerModule('worker'), DatabaseModule, RedisModule],
  providers: [ProjectionsService],
})
export class WorkerModule {}
