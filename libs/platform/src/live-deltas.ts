import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig, CONFIG } from '@parley/config';
import type { AssistantTextDelta } from '@parley/conversation';
import { RedisClient, RedisConnections } from './redis-connections';

export type { AssistantTextDelta } from '@parley/conversation';

/**
 * Token deltas over Redis pub/sub, one channel per conversation, so an SSE client on any API
 * replica sees the text a worker on any machine is writing. One subscriber connection per
 * process, channels reference-counted across that process's listeners.
 *
 * In a Redis Cluster the channels are sharded (SPUBLISH/SSUBSCRIBE): a delta goes to the one node
 * that owns its channel's slot, not to every node of the cluster as PUBLISH does, so the cost of
 * the stream of deltas spreads over the masters instead of landing on all of them.
 */
@Injectable()
export class LiveDeltas implements OnApplicationShutdown {
  private subscriber?: RedisClient;
  private readonly listeners = new Map<string, Set<(d: AssistantTextDelta) => void>>();

  constructor(
    private readonly redis: RedisConnections,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  private channel(conversationId: string): string {
    return `${this.config.queuePrefix}:deltas:${conversationId}`;
  }

  async publish(conversationId: string, delta: AssistantTextDelta): Promise<void> {
    const channel = this.channel(conversationId);
    const message = JSON.stringify(delta);
    if (this.redis.isCluster) await this.redis.main.spublish(channel, message);
    else await this.redis.main.publish(channel, message);
  }

  subscribe(conversationId: string, listener: (d: AssistantTextDelta) => void): () => void {
    const channel = this.channel(conversationId);
    const sub = this.ensureSubscriber();
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      // not awaited: while Redis is away the stream of stored events must not wait for live deltas
      (this.redis.isCluster ? sub.ssubscribe(channel) : sub.subscribe(channel)).catch(() => undefined);
    }
    set.add(listener);
    return () => {
      const current = this.listeners.get(channel);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) {
        this.listeners.delete(channel);
        (this.redis.isCluster ? sub.sunsubscribe(channel) : sub.unsubscribe(channel)).catch(() => undefined);
      }
    };
  }

  private ensureSubscriber(): RedisClient {
    if (this.subscriber) return this.subscriber;
    // ioredis re-subscribes its channels by itself after a reconnect (and, sharded, after a slot moves)
    const sub = this.redis.open('deltas-subscriber', { shardedSubscribers: this.redis.isCluster });
    sub.on(this.redis.isCluster ? 'smessage' : 'message', (channel: string, message: string) => {
      const set = this.listeners.get(channel);
      if (!set) return;
      let delta: AssistantTextDelta;
      try {
        delta = JSON.parse(message) as AssistantTextDelta;
      } catch {
        return;
      }
      for (const l of set) l(delta);
    });
    this.subscriber = sub;
    return sub;
  }

  onApplicationShutdown(): void {
    this.listeners.clear();
  }
}
