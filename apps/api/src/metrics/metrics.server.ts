import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { register } from 'prom-client';
import { AppConfig, CONFIG } from '@parley/config';
import { MetricsEndpoint, openMetricsEndpoint } from '@parley/platform';
import { MetricsService } from './metrics.service';

/**
 * GET /metrics on METRICS_PORT, beside the API's public port, as each worker has on
 * WORKER_METRICS_PORT. Nothing when the port is unset; the public port never serves them. Closed
 * last on shutdown.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private endpoint?: MetricsEndpoint;

  constructor(
    private readonly metrics: MetricsService,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.metricsPort;
    if (port === null) return;
    this.endpoint = await openMetricsEndpoint(
      port,
      async () => ({
        body: await this.metrics.render(),
        contentType: register.contentType,
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
