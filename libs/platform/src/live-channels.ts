import { OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@parley/config';
import { RedisClient, RedisConnections } from './redis-connections';

/**
 * Messages of one kind over Redis pub/sub, one channel per key (`<queuePrefix>:<topic>:<key>`),
 * so a listener on any process sees what a publisher on any machine sends. One subscriber
 * connection per instance, channels reference-counted across that instance's listeners.
 * Messages are live only: a listener that was not subscribed when one was sent never sees it.
 *
 * In a Redis Cluster the channels are sharded (SPUBLISH/SSUBSCRIBE): a message goes to the one node
 * that owns its channel's slot, not to every node of the cluster as PUBLISH does, so the cost of
 * the stream of messages spreads over the masters instead of landing on all of them.
 */
export abstract class LiveChannels<T> implements OnApplicationShutdown {
  private subscriber?: RedisClient;
  private readonly listeners = new Map<string, Set<(message: T) => void>>();

  protected constructor(
    private readonly redis: RedisConnections,
    private readonly config: AppConfig,
    private readonly topic: string,
  ) {}

  private channel(key: string): string {
    return `${this.config.queuePrefix}:${this.topic}:${key}`;
  }

  async publish(key: string, message: T): Promise<void> {
    const channel = this.channel(key);
    const payload = JSON.stringify(message);
    if (this.redis.isCluster) await this.redis.main.spublish(channel, payload);
    else await this.redis.main.publish(channel, payload);
  }

  subscribe(key: string, listener: (message: T) => void): () => void {
    const channel = this.channel(key);
    const sub = this.ensureSubscriber();
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      // not awaited: while Redis is away the caller's other work (stored events) must not wait for live messages
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
    const sub = this.redis.open(`${this.topic}-subscriber`, { shardedSubscribers: this.redis.isCluster });
    sub.on(this.redis.isCluster ? 'smessage' : 'message', (channel: string, payload: string) => {
      const set = this.listeners.get(channel);
      if (!set) return;
      let message: T;
      try {
        message = JSON.parse(payload) as T;
      } catch {
        return;
      }
      for (const l of set) l(message);
    });
    this.subscriber = sub;
    return sub;
  }

  onApplicationShutdown(): void {
    this.listeners.clear();
  }
}
