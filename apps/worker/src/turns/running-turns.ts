import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { cancelChannel } from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { RedisConnections } from '@parley/platform';

/**
 * The turns this process is running, each with an AbortController. A cancel request published by
 * any API replica aborts the turn's LLM stream here at once.
 */
@Injectable()
export class RunningTurns implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly controllers = new Map<string, AbortController>();
  private subscriber?: Redis;

  constructor(
    private readonly redis: RedisConnections,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subscriber = this.redis.open('cancel-subscriber');
    this.subscriber.on('message', (_channel: string, message: string) => {
      try {
        this.cancel((JSON.parse(message) as { turnId: string }).turnId);
      } catch {
        /* not a cancel request */
      }
    });
    await this.subscriber.subscribe(cancelChannel(this.config.queuePrefix));
  }

  async track<T>(turnId: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    this.controllers.set(turnId, controller);
    try {
      return await work(controller.signal);
    } finally {
      if (this.controllers.get(turnId) === controller) this.controllers.delete(turnId);
    }
  }

  cancel(turnId: string): void {
    this.controllers.get(turnId)?.abort();
  }

  get size(): number {
    return this.controllers.size;
  }

  onApplicationShutdown(): void {
    for (const c of this.controllers.values()) c.abort();
  }
}
