// first: tracing patches http, express, Nest, pg and ioredis as they load (off without OTEL_EXPORTER_OTLP_ENDPOINT)
import { startTracing } from '@parley/platform/tracing';
startTracing('parley-worker');
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { SHUTDOWN_SIGNALS } from '@parley/platform';
import { WorkerModule } from './worker.module';

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(WorkerModule, { bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks(SHUTDOWN_SIGNALS);
  await app.init();
  app.get(Logger).log('worker started');
}

main().catch((e: Error) => {
  console.error(e.message);
  process.exit(1);
});
