import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { cancelChannel } from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { RedisClient, RedisConnections } from '@parley/platform';

/**
 * The turns this process is running, each with an AbortController. A cancel request published by
 * any API replica aborts the turn's LLM stream here at once.
 */
@Injectable()
export class RunningTurns implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly controllers = new Map<string, AbortController>();
  private subscriber?: RedisClient;

  constructor(
    private readonly redis: RedisConnections,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subscriber = this.redis.open('cancel-subscriber');
    this.subscriber.on('message', (_channel: string, message: string) => {
      try {
        const { conversationId, turnId } = JSON.parse(message) as { conversationId: string; turnId: string };
        this.cancel(conversationId, turnId);
      } catch {
        /* not a cancel request */
      }
    });
    await this.subscriber.subscribe(cancelChannel(this.config.queuePrefix));
  }

  /** Turn ids are unique within a conversation only (a fork copies them): key by both. */
  async track<T>(conversationId: string, turnId: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const key = `${conversationId}:${turnId}`;
    const controller = new AbortController();
    this.controllers.set(key, controller);
    try {
      return await work(controller.signal);
    } finally {
      if (this.controllers.get(key) === controller) this.controllers.delete(key);
    }
  }

  cancel(conversationId: string, turnId: string): void {
    this.controllers.get(`${conversationId}:${turnId}`)?.abort();
  }

  get size(): number {
    return this.controllers.size;
  }

  /** Aborts every turn in hand: the shutdown grace period is over. */
  abortAll(): void {
    for (const c of this.controllers.values()) c.abort();
  }

  async onApplicationShutdown(): Promise<void> {
    this.abortAll(); // none left after a drained shutdown; a safety net otherwise
    await this.subscriber?.quit().catch(() => undefined);
  }
}
