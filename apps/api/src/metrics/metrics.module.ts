import { Global, MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { HttpMetricsMiddleware } from './http-metrics.middleware';
import { MetricsService } from './metrics.service';

@Global()
@Module({
  imports: [BullModule.registerQueue({ name: AGENT_TURNS_QUEUE })],
  providers: [MetricsService],
  exports: [MetricsService],
})
export class MetricsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // a named wildcard (path-to-regexp v8): a bare '*' works, with a LegacyRouteConverter warning at every start
    consumer.apply(HttpMetricsMiddleware).forRoutes('{*path}');
  }
}
