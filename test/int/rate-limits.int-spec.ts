import { randomBytes, randomUUID } from 'node:crypto';
import { AppConfig, loadConfig } from '@parley/config';
import { ConnectionExtras, RedisClient, RedisConnections } from '@parley/platform';
import { ProblemException } from '../../apps/api/src/http/problem.exception';
import type { MetricsService } from '../../apps/api/src/metrics/metrics.service';
import { RateLimits } from '../../apps/api/src/rate-limits/rate-limits';
import { STREAM_RETRY_AFTER_S, STREAM_SLOT_LEASE_MS, StreamSlots } from '../../apps/api/src/rate-limits/stream-slots';
import { redisUrl } from '../support/test-database';
import { waitFor } from '../support/wait-for';

/** Every connection the limiters open: they fail fast, so a test waits for them to be up. */
const opened: RedisClient[] = [];
class TrackedConnections extends RedisConnections {
  override open(name: string, extra?: ConnectionExtras): RedisClient {
    const client = super.open(name, extra);
    opened.push(client);
    return client;
  }
}

/** What a refusal was: its problem code and fields, or 'admitted'. */
async function outcome(p: Promise<unknown>): Promise<string | { code: string; retryAfter?: number; detail: string }> {
  try {
    await p;
    return 'admitted';
  } catch (e) {
    if (!(e instanceof ProblemException)) throw e;
    return { code: e.code, retryAfter: e.extras.retryAfter, detail: e.detail };
  }
}

/** The counters RateLimits and StreamSlots count refusals on, as lists of what they were told. */
function fakeMetrics() {
  const limited: string[] = [];
  let posts = 0;
  const metrics = {
    rateLimited: { inc: (labels: { limit: string }) => limited.push(labels.limit) },
    postsRateLimited: { inc: () => posts++ },
  } as unknown as MetricsService;
  return { metrics, limited, posts: () => posts };
}

describe('per-reader limits over Redis (RateLimits, StreamSlots)', () => {
  const prefix = `t-rl-${randomBytes(4).toString('hex')}`;
  const env = {
    NODE_ENV: 'development',
    REDIS_URL: redisUrl(),
    QUEUE_PREFIX: prefix,
    RATE_LIMIT_POSTS_PER_MIN: '2',
    RATE_LIMIT_FORKS_PER_MIN: '3',
    RATE_LIMIT_SEARCHES_PER_MIN: '2',
    SSE_MAX_STREAMS_PER_READER: '2',
  };
  const config: AppConfig = loadConfig(env);
  const connections: RedisConnections[] = [];
  /** one API replica's limiters, each on its own connections */
  const replica = async () => {
    const redis = new TrackedConnections(config);
    connections.push(redis);
    const m = fakeMetrics();
    const limiters = {
      limits: new RateLimits(redis, config, m.metrics),
      slots: new StreamSlots(redis, config, m.metrics),
    };
    await waitFor('the Redis connections to be up', () => opened.every((c) => c.status === 'ready'));
    return { ...limiters, ...m };
  };
  const redis = () => connections[0].main;
  afterAll(() => Promise.all(connections.map((c) => c.onApplicationShutdown())));

  describe(RateLimits.name, () => {
    it('admits a reader up to the limit, then answers rate_limited with a retryAfter within the minute', async () => {
      const { limits: sut } = await replica();
      const alice = `alice-${randomUUID()}`;
      expect(await outcome(sut.consume('forks', alice))).toBe('admitted');
      expect(await outcome(sut.consume('forks', alice, 2))).toBe('admitted');
      const refused = await outcome(sut.consume('forks', alice));
      expect(refused).toMatchObject({ code: 'rate_limited', detail: expect.stringMatching(/at most 3 a minute/) });
      const { retryAfter } = refused as { retryAfter: number };
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    });

    it('counts each reader and each limit on its own', async () => {
      const { limits: sut } = await replica();
      const alice = `alice-${randomUUID()}`;
      const bob = `bob-${randomUUID()}`;
      await sut.consume('searches', alice, 2);
      expect(await outcome(sut.consume('searches', alice))).toMatchObject({ code: 'rate_limited' });
      expect(await outcome(sut.consume('searches', bob))).toBe('admitted');
      expect(await outcome(sut.consume('forks', alice))).toBe('admitted');
    });

    it('counts across API replicas', async () => {
      const a = await replica();
      const b = await replica();
      const alice = `alice-${randomUUID()}`;
      await a.limits.consume('searches', alice);
      await b.limits.consume('searches', alice);
      expect(await outcome(a.limits.consume('searches', alice))).toMatchObject({ code: 'rate_limited' });
      expect(await outcome(b.limits.consume('searches', alice))).toMatchObject({ code: 'rate_limited' });
    });

    it('admits exactly the limit of concurrent requests', async () => {
      const { limits: sut } = await replica();
      const alice = `alice-${randomUUID()}`;
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => outcome(sut.consume('forks', alice))));
      expect(outcomes.filter((o) => o === 'admitted')).toHaveLength(3);
    });

    it('counts refusals by limit, and posts on their older metric too', async () => {
      const r = await replica();
      const alice = `alice-${randomUUID()}`;
      await r.limits.consume('posts', alice, 2);
      await outcome(r.limits.consume('posts', alice));
      await r.limits.consume('searches', alice, 2);
      await outcome(r.limits.consume('searches', alice));
      expect(r.limited).toEqual(['posts', 'searches']);
      expect(r.posts()).toBe(1);
    });

    it('gives the whole minute as the most one request may count', async () => {
      expect((await replica()).limits.capacity('forks')).toBe(3);
    });
  });

  describe(StreamSlots.name, () => {
    const keyOf = (userId: string) => `${prefix}:rl:streams:${userId}`;

    it('holds a reader to SSE_MAX_STREAMS_PER_READER open at once, across replicas; a release frees a slot', async () => {
      const a = await replica();
      const b = await replica();
      const alice = `alice-${randomUUID()}`;
      const first = await a.slots.take(alice);
      await b.slots.take(alice);
      const refused = await outcome(a.slots.take(alice));
      expect(refused).toMatchObject({ code: 'rate_limited', retryAfter: STREAM_RETRY_AFTER_S });
      expect(await outcome(b.slots.take(`bob-${randomUUID()}`))).toBe('admitted');
      await first.release();
      await first.release(); // a second release frees nothing more
      expect(await outcome(b.slots.take(alice))).toBe('admitted');
      expect(await outcome(b.slots.take(alice))).toMatchObject({ code: 'rate_limited' });
      expect(a.limited).toEqual(['streams']);
    });

    it("gives back a dead replica's slots once their leases lapse, and the key itself expires", async () => {
      const { slots: sut } = await replica();
      const alice = `alice-${randomUUID()}`;
      await sut.take(alice);
      await sut.take(alice);
      const ttl = await redis().pttl(keyOf(alice));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(STREAM_SLOT_LEASE_MS);
      expect(await outcome(sut.take(alice))).toMatchObject({ code: 'rate_limited' });
      // the replica holding them stopped renewing: as if a lease had passed
      const leases = await redis().zrange(keyOf(alice), 0, -1);
      for (const slot of leases) await redis().zadd(keyOf(alice), Date.now() - 1_000, slot);
      expect(await outcome(sut.take(alice))).toBe('admitted');
      expect(await redis().zcard(keyOf(alice))).toBe(1);
    });

    it("renews an open stream's lease on its heartbeat", async () => {
      const { slots: sut } = await replica();
      const alice = `alice-${randomUUID()}`;
      // only the heartbeat's interval: Redis, ioredis and waitFor keep the real clock
      jest.useFakeTimers({
        doNotFake: [
          'Date',
          'hrtime',
          'nextTick',
          'performance',
          'queueMicrotask',
          'setImmediate',
          'clearImmediate',
          'setTimeout',
          'clearTimeout',
        ],
      });
      try {
        const slot = await sut.take(alice);
        const [id, leased] = await redis().zrange(keyOf(alice), 0, -1, 'WITHSCORES');
        await redis().zadd(keyOf(alice), Number(leased) - 30_000, id); // half a lease gone by
        await redis().pexpire(keyOf(alice), 1_000);
        jest.advanceTimersByTime(STREAM_SLOT_LEASE_MS / 3);
        await waitFor(
          'the lease renewed',
          async () => Number(await redis().zscore(keyOf(alice), id)) >= Number(leased),
        );
        expect(await redis().pttl(keyOf(alice))).toBeGreaterThan(30_000);
        await slot.release();
        jest.advanceTimersByTime(STREAM_SLOT_LEASE_MS); // a released slot's heartbeat is stopped: nothing brings it back
        expect(await redis().exists(keyOf(alice))).toBe(0);
      } finally {
        jest.useRealTimers();
      }
    });

    it('leaves no key once every stream is closed, or the reader is forgotten', async () => {
      const { slots: sut } = await replica();
      const alice = `alice-${randomUUID()}`;
      const slot = await sut.take(alice);
      await slot.release();
      expect(await redis().exists(keyOf(alice))).toBe(0);
      await sut.take(alice);
      await sut.forget(alice);
      expect(await redis().exists(keyOf(alice))).toBe(0);
    });

    it('counts on this replica alone while Redis is unreachable', async () => {
      const away = loadConfig({ ...env, REDIS_URL: 'redis://127.0.0.1:1' });
      const unreachable = new RedisConnections(away); // not tracked: it is never up
      connections.push(unreachable);
      const sut = new StreamSlots(unreachable, away, fakeMetrics().metrics);
      const alice = `alice-${randomUUID()}`;
      const first = await sut.take(alice);
      await sut.take(alice);
      expect(await outcome(sut.take(alice))).toMatchObject({ code: 'rate_limited' });
      await first.release();
      expect(await outcome(sut.take(alice))).toBe('admitted');
    });
  });

  it('forgets an erased reader: no key of any limit is left', async () => {
    const { limits, slots } = await replica();
    const alice = `alice-${randomUUID()}`;
    for (const name of ['posts', 'forks', 'searches'] as const) await limits.consume(name, alice);
    await slots.take(alice);
    expect(await redis().keys(`${prefix}:*${alice}*`)).toHaveLength(4);
    await limits.forget(alice);
    await slots.forget(alice);
    expect(await redis().keys(`${prefix}:*${alice}*`)).toEqual([]);
    expect(await outcome(limits.consume('posts', alice, 2))).toBe('admitted');
  });
});
