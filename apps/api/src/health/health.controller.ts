import { Controller, Get, Header, Inject, ServiceUnavailableException } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Pool } from 'pg';
import { RedisConnections } from '@parley/platform';
import { Public } from '../auth/auth.guard';
import { MetricsService } from '../metrics/metrics.service';

@ApiTags('operations')
@Public()
@Controller()
export class HealthController {
  constructor(
    @Inject(Pool) private readonly pool: Pool,
    private readonly redis: RedisConnections,
    private readonly metricsService: MetricsService,
  ) {}

  @Get('healthz')
  healthz() {
    return { status: 'ok' };
  }

  /** Ready when both Postgres and Redis answer within a second. */
  @Get('readyz')
  async readyz() {
    const within = <T>(p: Promise<T>) =>
      Promise.race([p, new Promise<never>((_, rej) => setTimeout(() => rej(new Error('timeout')), 1_000).unref())]);
    const [db, redis] = await Promise.allSettled([within(this.pool.query('SELECT 1')), within(this.redis.main.ping())]);
    const checks = {
      database: db.status === 'fulfilled' ? 'ok' : 'down',
      redis: redis.status === 'fulfilled' ? 'ok' : 'down',
    };
    if (checks.database !== 'ok' || checks.redis !== 'ok') throw new ServiceUnavailableException({ message: checks });
    return { status: 'ready', checks };
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics() {
    return this.metricsService.render();
  }
}
