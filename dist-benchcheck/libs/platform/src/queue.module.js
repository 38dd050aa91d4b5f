"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.queueRootModule = void 0;
const bullmq_1 = require("@nestjs/bullmq");
const config_1 = require("@parley/config");
const redis_connections_1 = require("./redis-connections");
/** BullMQ on the shared Redis, under QUEUE_PREFIX so deployments can share one Redis. */
const queueRootModule = () => bullmq_1.BullModule.forRootAsync({
    inject: [config_1.CONFIG, redis_connections_1.RedisConnections],
    useFactory: (config) => ({
        connection: { url: config.redisUrl, maxRetriesPerRequest: null },
        prefix: config.queuePrefix,
    }),
});
exports.queueRootModule = queueRootModule;
//# sourceMappingURL=queue.module.js.map