import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import Redis, { RedisOptions } from 'ioredis';
import { AppConfig, CONFIG } from '@parley/config';

/**
 * Hands out ioredis connections (commands, pub/sub, BullMQ need separate ones) and closes them
 * all at shutdown. maxRetriesPerRequest: null is what BullMQ requires, and lets commands wait
 * out a Redis restart instead of failing.
 */
@Injectable()
export class RedisConnections implements OnApplicationShutdown {
  private readonly opened: Redis[] = [];
  readonly url: string;
  readonly main: Redis;

  constructor(@Inject(CONFIG) config: AppConfig) {
    this.url = config.redisUrl;
    this.main = this.open('main');
  }

  open(name: string, extra: RedisOptions = {}): Redis {
    const redis = new Redis(this.url, { maxRetriesPerRequest: null, connectionName: `parley-${name}`, ...extra });
    redis.on('error', () => undefined); // ioredis reconnects by itself; readiness reports the outage
    this.opened.push(redis);
    return redis;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.opened.map((r) => r.quit().catch(() => r.disconnect())));
  }
}
