export * from './project-root';
export * from './database.module';
export * from './redis.module';
export * from './logger';
