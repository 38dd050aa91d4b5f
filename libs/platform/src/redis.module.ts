import { Global, Module } from '@nestjs/common';
import { LiveDeltas } from './live-deltas';
import { RedisConnections } from './redis-connections';

@Global()
@Module({ providers: [RedisConnections, LiveDeltas], exports: [RedisConnections, LiveDeltas] })
export class RedisModule {}
