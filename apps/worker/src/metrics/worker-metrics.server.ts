import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig, CONFIG } from '@parley/config';
import { MetricsEndpoint, openMetricsEndpoint } from '@parley/platform';
import { WorkerMetrics } from './worker-metrics';

/**
 * GET /metrics on WORKER_METRICS_PORT, as the worker has no Nest HTTP app. Nothing when the port
 * is unset. Closed last on shutdown, so the grace period is still seen.
 */
@Injectable()
export class WorkerMetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerMetricsServer.name);
  private endpoint?: MetricsEndpoint;

  constructor(
    private readonly metrics: WorkerMetrics,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.worker.metricsPort;
    if (port === null) return;
    const { registry } = this.metrics;
    this.endpoint = await openMetricsEndpoint(
      port,
      async () => ({
        body: await registry.metrics(),
        contentType: registry.contentType,
      }),
      this.config.host,
    );
    this.logger.log(`metrics on :${this.endpoint.port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const endpoint = this.endpoint;
    this.endpoint = undefined;
    await endpoint?.close();
  }
}
