import { BullModule } from '@nestjs/bullmq';
import { AppConfig, CONFIG } from '@parley/config';
import { RedisConnections } from './redis-connections';

/** BullMQ on the deployment's Redis, under QUEUE_PREFIX so deployments can share one Redis. */
export const queueRootModule = () =>
  BullModule.forRootAsync({
    inject: [CONFIG, RedisConnections],
    useFactory: (config: AppConfig) => ({
      connection: { url: config.redisUrl, maxRetriesPerRequest: null },
      prefix: config.queuePrefix,
    }),
  });
