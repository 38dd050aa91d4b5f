import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { shutdownTracing } from './tracing';

/**
 * Flushes the spans still buffered when the process stops (SHUTDOWN_SIGNALS): after the
 * before-shutdown hooks, so the spans of the turns a stopping worker finished go out too.
 */
@Injectable()
export class TracingShutdown implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    await shutdownTracing();
  }
}
