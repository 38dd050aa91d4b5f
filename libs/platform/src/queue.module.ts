import { BullModule } from '@nestjs/bullmq';
import { AppConfig, CONFIG } from '@parley/config';
import { queueKeyPrefix, RedisConnections, sentinelOptions } from './redis-connections';

/**
 * BullMQ on the deployment's Redis, under QUEUE_PREFIX so deployments can share one Redis. A
 * cluster needs a Cluster connection to share (BullMQ cannot tell a cluster from options alone; it
 * duplicates it for each worker's blocking connection); one server or Sentinel is given options, from
 * which BullMQ opens its own connections.
 */
export const queueRootModule = () =>
  BullModule.forRootAsync({
    inject: [CONFIG, RedisConnections],
    useFactory: (config: AppConfig, redis: RedisConnections) => ({
      connection:
        config.redis.kind === 'cluster'
          ? redis.open('bullmq')
          : config.redis.kind === 'sentinel'
            ? sentinelOptions(config.redis, { maxRetriesPerRequest: null, connectionName: 'parley-bullmq' })
            : { url: config.redis.url, maxRetriesPerRequest: null },
      prefix: queueKeyPrefix(config),
    }),
  });
