// first: refuse a Node.js older than package.json's engines, with what to do
import '@parley/platform/supported-node';
// then tracing, which patches http, Fastify, Nest, pg and ioredis as they load (off without OTEL_EXPORTER_OTLP_ENDPOINT)
import { startTracing } from '@parley/platform/tracing';
startTracing('parley-api');
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Logger } from 'nestjs-pino';
import { AppConfig, CONFIG } from '@parley/config';
import { createApiApp } from './create-api-app';

async function main(): Promise<void> {
  const app = await createApiApp();
  const { port, host } = app.get<AppConfig>(CONFIG);
  await app.listen(port, host);
  // longer than a load balancer's idle timeout (AWS ALB: 60 s), so the balancer, not Node, closes
  // idle keep-alive connections and never sends a request on one Node just closed (a 502)
  const server = app.getHttpServer() as import('node:http').Server;
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  // the one line a first start needs: where to point curl and a browser (the port actually bound, so PORT=0 works)
  const bound = server.address() as AddressInfo;
  const everywhere = ['0.0.0.0', '::', '127.0.0.1', '::1'].includes(bound.address);
  const url = `http://${everywhere ? 'localhost' : bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`;
  app.get(Logger).log(`Parley API listening on ${url} — web page at ${url}/, OpenAPI at ${url}/docs`);
}

main().catch((e: Error) => {
  console.error(e.message);
  process.exit(1);
});
