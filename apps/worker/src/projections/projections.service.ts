import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig, CONFIG } from '@parley/config';
import { AppendNotifier, CheckpointedConsumerRunner, EventStore } from '@parley/event-store';
import { ConversationsProjection } from '@parley/read-models';

/**
 * How long the read models lag the log at most for the sake of batching: a turn's appends come
 * tens of milliseconds apart, and the clients that follow a turn read the log (SSE), not these.
 */
const PROJECTION_COALESCE_MS = 25;

/**
 * Keeps the read models up with the log. Any number of workers may run it: one leads (a lease),
 * the others stand by to take over, and the checkpoint CAS serialises them anyway.
 */
@Injectable()
export class ProjectionsService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ProjectionsService.name);
  private readonly runner: CheckpointedConsumerRunner;

  constructor(
    store: EventStore,
    notifier: AppendNotifier,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {
    this.runner = new CheckpointedConsumerRunner(store, new ConversationsProjection(), notifier, {
      pollMs: config.eventPollMs,
      coalesceMs: PROJECTION_COALESCE_MS,
      exclusive: true, // one worker projects at a time; the rest stand by
      onError: (e, event) =>
        this.logger.error(
          `read-models failed${event ? ` on ${event.type} ${event.id}` : ''}: ${String((e as Error)?.message ?? e)}`,
        ),
    });
  }

  onApplicationBootstrap(): void {
    if (this.config.worker.projectionsEnabled) this.runner.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runner.stop();
  }
}
