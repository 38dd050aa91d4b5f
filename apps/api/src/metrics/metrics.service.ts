import { Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { collectDefaultMetrics, Counter, Gauge, Histogram, register } from 'prom-client';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { ConsumerStats } from '@parley/event-store';

/**
 * Prometheus metrics, served on METRICS_PORT (metrics.server.ts). Queue depth and consumer lag are
 * read at scrape time from Redis and Postgres, so the API reports the whole deployment; each worker
 * serves its own model, tool and turn metrics on WORKER_METRICS_PORT (docs/metrics.md).
 */
@Injectable()
export class MetricsService {
  readonly httpDuration = new Histogram({
    name: 'parley_http_request_duration_seconds',
    help: 'HTTP request duration by method, route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  });
  readonly sseConnections = new Gauge({ name: 'parley_sse_connections', help: 'SSE streams open on this API process' });
  readonly postsRateLimited = new Counter({ name: 'parley_posts_rate_limited_total', help: 'posts answered 429' });
  readonly rateLimited = new Counter({
    name: 'parley_rate_limited_total',
    help: 'requests answered 429 rate_limited, by the limit they passed (posts, forks, conversations, batches, searches, mcpAsks, streams)',
    labelNames: ['limit'],
  });
  readonly postsBudgetRefused = new Counter({
    name: 'parley_posts_budget_refused_total',
    help: 'posts and batches refused with 402 budget_exceeded: the reader spent the monthly budget',
  });

  constructor(@InjectQueue(AGENT_TURNS_QUEUE) queue: Queue, consumers: ConsumerStats) {
    if (!register.getSingleMetric('process_cpu_user_seconds_total')) collectDefaultMetrics();
    new Gauge({
      name: 'parley_agent_jobs',
      help: 'agent turn jobs in the queue by state',
      labelNames: ['state'],
      async collect() {
        const counts = await withTimeout(
          queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed'),
        ).catch(() => ({}));
        for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
      },
    });
    new Gauge({
      name: 'parley_consumer_lag_events',
      help: 'log positions between the head and where a consumer (projections, dispatcher) has got to',
      labelNames: ['consumer'],
      async collect() {
        for (const r of await consumers.lag()) this.set({ consumer: r.consumer }, r.lag);
      },
    });
    new Gauge({
      name: 'parley_dead_letters',
      help: 'events consumers gave up on',
      labelNames: ['consumer'],
      async collect() {
        for (const r of await consumers.deadLetters()) this.set({ consumer: r.consumer }, r.count);
      },
    });
  }

  render(): Promise<string> {
    return register.metrics();
  }
}

function withTimeout<T>(p: Promise<T>, ms = 1_000): Promise<T> {
  return Promise.race([p, new Promise<never>((_, rej) => setTimeout(() => rej(new Error('timeout')), ms).unref())]);
}
