import { Module } from '@nestjs/common';
import { collectDefaultMetrics, register } from 'prom-client';
import { WorkerMetrics } from './worker-metrics';
import { WorkerMetricsServer } from './worker-metrics.server';

/** The worker's instruments on prom-client's default registry, with Node's process metrics, and their port. */
@Module({
  providers: [
    {
      provide: WorkerMetrics,
      useFactory: () => {
        if (!register.getSingleMetric('process_cpu_user_seconds_total')) collectDefaultMetrics({ register });
        return new WorkerMetrics(register);
      },
    },
    WorkerMetricsServer,
  ],
  exports: [WorkerMetrics],
})
export class WorkerMetricsModule {}
