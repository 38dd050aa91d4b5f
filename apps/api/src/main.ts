// first: tracing patches http, express, Nest, pg and ioredis as they load (off without OTEL_EXPORTER_OTLP_ENDPOINT)
import { startTracing } from '@parley/platform/tracing';
startTracing('parley-api');
import 'reflect-metadata';
import { AppConfig, CONFIG } from '@parley/config';
import { createApiApp } from './create-api-app';

async function main(): Promise<void> {
  const app = await createApiApp();
  const { port } = app.get<AppConfig>(CONFIG);
  await app.listen(port, '0.0.0.0');
  // longer than a load balancer's idle timeout (AWS ALB: 60 s), so the balancer, not Node, closes
  // idle keep-alive connections and never sends a request on one Node just closed (a 502)
  const server = app.getHttpServer() as import('node:http').Server;
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
}

main().catch((e: Error) => {
  console.error(e.message);
  process.exit(1);
});
