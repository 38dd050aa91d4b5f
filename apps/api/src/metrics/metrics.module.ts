import { Global, Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { MetricsServer } from './metrics.server';
import { MetricsService } from './metrics.service';

/** The API's Prometheus metrics, served on METRICS_PORT (metrics.server.ts); requests are timed by a Fastify hook (http-metrics.ts). */
@Global()
@Module({
  imports: [BullModule.registerQueue({ name: AGENT_TURNS_QUEUE })],
  providers: [MetricsService, MetricsServer],
  exports: [MetricsService],
})
export class MetricsModule {}
