import { Inject, Injectable } from '@nestjs/common';
import { problem } from '../http/problem.exception';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppConfig, CONFIG } from '@parley/config';
import { RedisConnections } from '@parley/platform';
import { MetricsService } from '../metrics/metrics.service';

/**
 * RATE_LIMIT_POSTS_PER_MIN per user, counted across every API replica through Redis. While Redis is
 * unreachable the limit is kept per replica in memory (the insurance limiter), so posting, which
 * only needs Postgres, goes on.
 */
@Injectable()
export class PostRateLimiter {
  private readonly limiter: RateLimiterRedis;

  constructor(
    redis: RedisConnections,
    @Inject(CONFIG) config: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    this.limiter = new RateLimiterRedis({
      // fail fast instead of queueing commands while Redis is away
      storeClient: redis.open('rate-limit', { maxRetriesPerRequest: 1, enableOfflineQueue: false }),
      keyPrefix: `${config.queuePrefix}:rl:posts`,
      points: config.limits.postsPerMinute,
      duration: 60,
      useRedisPackage: false,
      insuranceLimiter: new RateLimiterMemory({ points: config.limits.postsPerMinute, duration: 60 }),
    });
  }

  /** Counts `posts` messages (a batch counts each prompt); 429 rate_limited past the limit. */
  async consume(userId: string, posts = 1): Promise<void> {
    try {
      await this.limiter.consume(userId, posts);
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      this.metrics.postsRateLimited.inc();
      const retryAfter = Math.max(1, Math.ceil(e.msBeforeNext / 1000));
      throw problem('rate_limited', `too many messages: at most ${this.limiter.points} a minute`, { retryAfter });
    }
  }

  /** Drops the user's count (an erased account leaves no key behind). */
  async forget(userId: string): Promise<void> {
    await this.limiter.delete(userId);
  }
}
