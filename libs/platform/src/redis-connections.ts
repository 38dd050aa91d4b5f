import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import Redis, { Cluster, ClusterOptions, RedisOptions } from 'ioredis';
import { AppConfig, CONFIG, RedisTopology } from '@parley/config';

/** A connection to the deployment's Redis, whichever topology it is: both speak the same commands. */
export type RedisClient = Redis | Cluster;

/** What a connection may add to the defaults (the command timeouts and queueing of the rate limiter). */
export interface ConnectionExtras {
  maxRetriesPerRequest?: number | null;
  enableOfflineQueue?: boolean;
  /** Cluster only: subscribe to sharded channels (SSUBSCRIBE) on the node that owns each */
  shardedSubscribers?: boolean;
}

/**
 * A primary that Sentinel demoted answers writes with READONLY until the client reconnects to the
 * new one: reconnect (ioredis asks the sentinels again) and resend the command.
 */
const reconnectOnReadOnly = (error: Error): 2 | false => (error.message.startsWith('READONLY') ? 2 : false);

/**
 * Hands out ioredis connections (commands, pub/sub, BullMQ need separate ones) and closes them
 * all at shutdown. maxRetriesPerRequest: null is what BullMQ requires, and lets commands wait
 * out a Redis restart (or a Sentinel failover) instead of failing.
 */
@Injectable()
export class RedisConnections implements OnApplicationShutdown {
  private readonly opened: RedisClient[] = [];
  readonly topology: RedisTopology;
  readonly main: RedisClient;

  constructor(@Inject(CONFIG) config: AppConfig) {
    this.topology = config.redis;
    this.main = this.open('main');
  }

  get isCluster(): boolean {
    return this.topology.kind === 'cluster';
  }

  open(name: string, extra: ConnectionExtras = {}): RedisClient {
    const redis = connect(this.topology, `parley-${name}`, extra);
    redis.on('error', () => undefined); // ioredis reconnects by itself; readiness reports the outage
    this.opened.push(redis);
    return redis;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.opened.map((r) => r.quit().catch(() => r.disconnect())));
  }
}

/** One connection to the topology: a Redis for one server or Sentinel, a Cluster for a cluster. */
export function connect(topology: RedisTopology, connectionName: string, extra: ConnectionExtras = {}): RedisClient {
  const { shardedSubscribers, enableOfflineQueue, maxRetriesPerRequest = null } = extra;
  const common: RedisOptions = {
    maxRetriesPerRequest,
    connectionName,
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
  };
  switch (topology.kind) {
    case 'single':
      return new Redis(topology.url, common);
    case 'sentinel':
      return new Redis(sentinelOptions(topology, common));
    case 'cluster': {
      const options: ClusterOptions = {
        redisOptions: {
          connectionName,
          maxRetriesPerRequest,
          username: topology.username,
          password: topology.password,
          tls: topology.tls ? {} : undefined,
        },
        shardedSubscribers: shardedSubscribers ?? false,
        ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
      };
      return new Cluster(topology.nodes, options);
    }
  }
}

/** Options for a connection to the primary that the sentinels name. */
export function sentinelOptions(
  topology: Extract<RedisTopology, { kind: 'sentinel' }>,
  common: RedisOptions = { maxRetriesPerRequest: null },
): RedisOptions {
  return {
    ...common,
    sentinels: topology.sentinels,
    name: topology.name,
    username: topology.username,
    password: topology.password,
    tls: topology.tls ? {} : undefined,
    // learn of a failover from the sentinels at once, not from the next failed command
    failoverDetector: true,
    reconnectOnError: reconnectOnReadOnly,
  };
}

/**
 * BullMQ's key prefix: in a cluster, wrapped in a hash tag so that every key of a queue lands in one
 * slot (BullMQ's scripts touch several keys at once, which a cluster allows only within a slot).
 */
export function queueKeyPrefix(config: Pick<AppConfig, 'queuePrefix' | 'redis'>): string {
  return config.redis.kind === 'cluster' ? `{${config.queuePrefix}}` : config.queuePrefix;
}
