import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { register } from 'prom-client';
import { AppConfig, CONFIG } from '@parley/config';
import { MetricsService } from './metrics.service';

/**
 * GET /metrics on METRICS_PORT: a bare node HTTP server beside the API's public port, as each
 * worker has on WORKER_METRICS_PORT, so the metrics stay on the network Prometheus scrapes from.
 * Nothing when the port is unset; the public port never serves them. Closed last on shutdown.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server?: Server;

  constructor(
    private readonly metrics: MetricsService,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.metricsPort;
    if (port === null) return;
    const server = createServer((req, res) => {
      if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
        return;
      }
      this.metrics.render().then(
        (body) => res.writeHead(200, { 'content-type': register.contentType }).end(body),
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
