import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { AppConfig, CONFIG } from '@parley/config';
import { WorkerMetrics } from './worker-metrics';

/**
 * GET /metrics on WORKER_METRICS_PORT: a bare node HTTP server, as the worker has no Nest HTTP
 * app. Nothing when the port is unset. Closed last on shutdown, so the grace period is still seen.
 */
@Injectable()
export class WorkerMetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerMetricsServer.name);
  private server?: Server;

  constructor(
    private readonly metrics: WorkerMetrics,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.worker.metricsPort;
    if (port === null) return;
    const { registry } = this.metrics;
    const server = createServer((req, res) => {
      if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
        return;
      }
      registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
        (e: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${e.message}\n`),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, () => resolve());
    });
    this.server = server;
    this.logger.log(`metrics on :${(server.address() as AddressInfo).port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections(); // a scraper's keep-alive connection would hold close() open
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
