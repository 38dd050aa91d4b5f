import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AppConfig, CONFIG } from '@parley/config';
import { RedisClient, RedisConnections } from '@parley/platform';
import { problem } from '../http/problem.exception';
import type { FastifyReply } from 'fastify';
import { hijackForStream } from '../http/cors';
import { MetricsService } from '../metrics/metrics.service';

/** How long a slot outlives its last heartbeat: a crashed replica's streams free theirs after this. */
export const STREAM_SLOT_LEASE_MS = 60_000;
const HEARTBEAT_MS = STREAM_SLOT_LEASE_MS / 3;
/** A slot frees when one of the reader's streams closes, which no clock predicts: a short wait. */
export const STREAM_RETRY_AFTER_S = 5;

/**
 * The reader's slots are a sorted set of leases (slot id → when it lapses, by Redis's clock, so
 * replicas' clocks do not matter): lapsed leases are dropped before counting, so a replica that
 * died holding slots gives them back within a lease, where a bare counter would stay high forever.
 */
const TAKE = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;
/** Extends a held lease (XX: a slot already released or forgotten is not brought back). */
const RENEW = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
if redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1`;

/** A held slot: give it back when the stream ends. */
export interface StreamSlot {
  release(): Promise<void>;
}

/**
 * SSE_MAX_STREAMS_PER_READER: how many event streams one reader may hold open at once, across
 * every API replica (Redis). A stream takes a slot before its 200 and gives it back when it ends;
 * one more is a 429 rate_limited. While Redis is unreachable the limit is kept per replica.
 */
@Injectable()
export class StreamSlots {
  private readonly redis: RedisClient;
  private readonly log = new Logger(StreamSlots.name);
  /** this replica's slots per reader: the count while Redis is away */
  private readonly held = new Map<string, number>();
  /** whether the last take found Redis away (an outage is logged once, not per stream) */
  private redisAway = false;

  constructor(
    redis: RedisConnections,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    // fail fast instead of queueing commands while Redis is away
    this.redis = redis.open('stream-slots', { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  }

  /**
   * Serves a stream on the raw response while it holds one of the reader's slots (a 429 before the
   * 200 when they hold them all), the CORS headers carried over as the raw response would not send them.
   */
  serving(userId: string, reply: FastifyReply, serve: () => Promise<void>): Promise<void> {
    return this.holding(userId, () => {
      hijackForStream(reply);
      return serve();
    });
  }

  /** Runs `work` (which may refuse before it streams) while it holds one of the reader's slots. */
  async holding<T>(userId: string, work: () => Promise<T>): Promise<T> {
    const slot = await this.take(userId);
    try {
      return await work();
    } finally {
      await slot.release();
    }
  }

  /** A slot for one of the reader's streams, or a 429 rate_limited when they hold them all. */
  async take(userId: string): Promise<StreamSlot> {
    const max = this.config.limits.streamsPerReader;
    const slotId = randomUUID();
    const key = this.keyOf(userId);
    let taken: boolean;
    try {
      taken = (await this.redis.eval(TAKE, 1, key, max, slotId, STREAM_SLOT_LEASE_MS)) === 1;
      this.redisAway = false;
    } catch (e) {
      if (!this.redisAway) this.log.warn(`stream slots counted on this replica alone, Redis failed: ${String(e)}`);
      this.redisAway = true;
      taken = (this.held.get(userId) ?? 0) < max;
    }
    if (!taken) {
      this.metrics.rateLimited.inc({ limit: 'streams' });
      throw problem(
        'rate_limited',
        `too many open streams: at most ${max} at once; close one or try again in ${STREAM_RETRY_AFTER_S} s`,
        { retryAfter: STREAM_RETRY_AFTER_S },
      );
    }
    this.held.set(userId, (this.held.get(userId) ?? 0) + 1);
    const heartbeat = setInterval(() => {
      this.redis.eval(RENEW, 1, key, slotId, STREAM_SLOT_LEASE_MS).catch(() => undefined); // lapses if Redis stays away
    }, HEARTBEAT_MS).unref();
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(heartbeat);
        const left = (this.held.get(userId) ?? 1) - 1;
        if (left > 0) this.held.set(userId, left);
        else this.held.delete(userId);
        await this.redis.zrem(key, slotId).catch(() => undefined); // else the lease lapses by itself
      },
    };
  }

  /** Drops the reader's slots (an erased account leaves no key behind; with Redis away, it lapses within a lease). */
  async forget(userId: string): Promise<void> {
    await this.redis.del(this.keyOf(userId)).catch(() => undefined);
  }

  private keyOf(userId: string): string {
    return `${this.config.queuePrefix}:rl:streams:${userId}`;
  }
}
