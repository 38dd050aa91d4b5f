import { Global, Module } from '@nestjs/common';
import { RedisConnections } from './redis-connections';

@Global()
@Module({ providers: [RedisConnections], exports: [RedisConnections] })
export class RedisModule {}
