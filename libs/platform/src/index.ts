export * from './project-root';
export * from './database.module';
export * from './redis-connections';
export * from './redis.module';
export * from './logger';
export * from './live-deltas';
export * from './stream-watcher';
export * from './queue.module';
