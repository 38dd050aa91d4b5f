// first: refuse a Node.js older than package.json's engines, with what to do
import '@parley/platform/supported-node';
// then tracing, which patches http, Nest, pg and ioredis as they load (off without OTEL_EXPORTER_OTLP_ENDPOINT)
import { startTracing } from '@parley/platform/tracing';
startTracing('parley-worker');
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { AppConfig, CONFIG } from '@parley/config';
import { SHUTDOWN_SIGNALS } from '@parley/platform';
import { WorkerModule } from './worker.module';

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(WorkerModule, { bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks(SHUTDOWN_SIGNALS);
  await app.init();
  const { worker, books } = app.get<AppConfig>(CONFIG);
  const roles = [
    worker.agentEnabled && 'agent turns',
    books.ingestEnabled && 'book ingestion',
    worker.projectionsEnabled && 'projections',
    worker.dispatcherEnabled && 'dispatcher',
  ].filter(Boolean);
  app.get(Logger).log(`Parley worker started (no HTTP port): ${roles.join(', ') || 'no role enabled'}`);
}

main().catch((e: Error) => {
  console.error(e.message);
  process.exit(1);
});
