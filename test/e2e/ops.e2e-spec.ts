import { randomUUID } from 'node:crypto';
import { clientFor, startStack, Stack } from '../support/stack';
import { openStream } from '../support/sse-client';

/** What an operator relies on: the rate limit and the metrics. */
describe('operations (e2e)', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_POSTS_PER_MIN: '3', AGENT_ENABLED: 'false' } });
  }, 60_000);
  afterAll(() => stack?.stop());

  it('answers 429 with Retry-After past RATE_LIMIT_POSTS_PER_MIN, per user, appending nothing', async () => {
    const alice = clientFor(stack.base, `rl-${randomUUID()}`);
    const bob = clientFor(stack.base, `rl-${randomUUID()}`);
    const id = (await alice.req('POST', '/v1/conversations', {})).body.id;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await alice.req('POST', `/v1/conversations/${id}/messages`, { content: `m${i}` })).status);
    expect(statuses).toEqual([202, 202, 202, 429]);
    const limited = await alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'again' });
    expect(limited.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const events = (await alice.req('GET', `/v1/conversations/${id}/events`)).body.items;
    expect(events.filter((e: any) => e.type === 'UserMessagePosted')).toHaveLength(3);
    const bobs = (await bob.req('POST', '/v1/conversations', {})).body.id;
    expect((await bob.req('POST', `/v1/conversations/${bobs}/messages`, { content: 'mine' })).status).toBe(202);
  });

  it('exposes Prometheus metrics: requests, SSE streams, queue depth, consumer lag', async () => {
    const alice = clientFor(stack.base, `m-${randomUUID()}`);
    const id = (await alice.req('POST', '/v1/conversations', {})).body.id;
    await alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'queued, never answered here' });
    const s = openStream(`${stack.base}/v1/conversations/${id}/stream`, { token: alice.token });
    await s.until('the stream to open', (f) => f.length > 0);
    const text = await (await fetch(`${stack.base}/metrics`)).text();
    s.close();
    expect(text).toMatch(
      /parley_http_request_duration_seconds_count\{method="POST",route="\/v1\/conversations\/:id\/messages",status="202"\} \d+/,
    );
    expect(text).toMatch(/parley_sse_connections 1/);
    expect(text).toMatch(/parley_agent_jobs\{state="waiting"\} [1-9]/);
    expect(text).toMatch(/parley_consumer_lag_events\{consumer="read-models"\} \d+/);
    expect(text).toMatch(/process_resident_memory_bytes \d+/);
  });
});
