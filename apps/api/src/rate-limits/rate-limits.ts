import { Inject, Injectable } from '@nestjs/common';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppConfig, CONFIG, RateLimitsPerMinute } from '@parley/config';
import { RedisConnections } from '@parley/platform';
import { problem } from '../http/problem.exception';
import { MetricsService } from '../metrics/metrics.service';

/** What a reader is counted on: one RATE_LIMIT_*_PER_MIN each. */
export type RateLimitName = keyof RateLimitsPerMinute;

/** What each limit counts, as a refusal names it. */
const COUNTED: Record<RateLimitName, string> = {
  posts: 'messages',
  forks: 'forks (a fork counts 1, and 1 more per 100 events it copies)',
  conversations: 'new conversations',
  batches: 'batches',
  searches: 'searches',
  mcpAsks: 'MCP asks',
};

/**
 * Per-reader limits a minute (RATE_LIMIT_*_PER_MIN), one fixed window per limit, counted across
 * every API replica through Redis. While Redis is unreachable each limit is kept per replica in
 * memory (the insurance limiter), so what only needs Postgres goes on.
 */
@Injectable()
export class RateLimits {
  private readonly limiters: Record<RateLimitName, RateLimiterRedis>;

  constructor(
    redis: RedisConnections,
    @Inject(CONFIG) config: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    // fail fast instead of queueing commands while Redis is away
    const storeClient = redis.open('rate-limit', { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    const limiter = (name: RateLimitName) => {
      const points = config.limits.perMinute[name];
      return new RateLimiterRedis({
        storeClient,
        keyPrefix: `${config.queuePrefix}:rl:${name}`,
        points,
        duration: 60,
        useRedisPackage: false,
        insuranceLimiter: new RateLimiterMemory({ points, duration: 60 }),
      });
    };
    this.limiters = {
      posts: limiter('posts'),
      forks: limiter('forks'),
      conversations: limiter('conversations'),
      batches: limiter('batches'),
      searches: limiter('searches'),
      mcpAsks: limiter('mcpAsks'),
    };
  }

  /**
   * Counts `points` against the reader's `name` limit; past it, a 429 rate_limited with
   * retryAfter (the Retry-After header), before the caller has written anything.
   */
  async consume(name: RateLimitName, userId: string, points = 1): Promise<void> {
    const limiter = this.limiters[name];
    try {
      await limiter.consume(userId, points);
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      this.metrics.rateLimited.inc({ limit: name });
      if (name === 'posts') this.metrics.postsRateLimited.inc(); // the older metric, which dashboards read
      const retryAfter = Math.max(1, Math.ceil(e.msBeforeNext / 1000));
      throw problem(
        'rate_limited',
        `too many ${COUNTED[name]}: at most ${limiter.points} a minute; try again in ${retryAfter} s`,
        { retryAfter },
      );
    }
  }

  /** The most one request may count against `name`: more would be refused however long it waited. */
  capacity(name: RateLimitName): number {
    return this.limiters[name].points;
  }

  /** Drops the reader's counts (an erased account leaves no key behind). */
  async forget(userId: string): Promise<void> {
    await Promise.all(Object.values(this.limiters).map((l) => l.delete(userId)));
  }
}
