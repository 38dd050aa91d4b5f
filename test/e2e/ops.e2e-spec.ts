import { randomUUID } from 'node:crypto';
import { clientFor, startStack, Stack, tokenFor } from '../support/stack';
import { waitFor } from '../support/wait-for';
import { openStream } from '../support/sse-client';

/** What an operator relies on: the rate limit, the metrics and the logs. */
describe('operations (e2e)', () => {
  let stack: Stack;

  beforeAll(async () => {
    // info: the request logs are the ones that carry URLs
    stack = await startStack({ env: { RATE_LIMIT_POSTS_PER_MIN: '3', AGENT_ENABLED: 'false', LOG_LEVEL: 'info' } });
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

  it('gives a retry with the same Idempotency-Key its first answer at the rate limit, not a 429', async () => {
    const alice = clientFor(stack.base, `rl-${randomUUID()}`);
    const id = (await alice.req('POST', '/v1/conversations', {})).body.id;
    const post = (content: string, key: string) =>
      alice.req('POST', `/v1/conversations/${id}/messages`, { content }, { 'idempotency-key': key });
    const firsts = [];
    for (let i = 0; i < 3; i++) firsts.push(await post(`m${i}`, `k${i}`));
    expect(firsts.map((r) => r.status)).toEqual([202, 202, 202]);
    expect((await post('m3', 'k3')).status).toBe(429);
    const retry = await post('m0', 'k0');
    expect([retry.status, retry.body]).toEqual([202, firsts[0].body]);
    expect((await post('not m0', 'k0')).status).toBe(422);
  });

  it('exposes Prometheus metrics: requests, SSE streams, queue depth, consumer lag', async () => {
    const alice = clientFor(stack.base, `m-${randomUUID()}`);
    const id = (await alice.req('POST', '/v1/conversations', {})).body.id;
    await alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'queued, never answered here' });
    const s = openStream(`${stack.base}/v1/conversations/${id}/stream`, { token: alice.token });
    await s.until('the stream to open', (f) => f.length > 0);
    // the lag is read from the worker's checkpoint, written once it has projected a first batch
    await waitFor('the worker to checkpoint its projections', async () => {
      const { rowCount } = await stack.db.pool.query(
        "SELECT 1 FROM consumer_checkpoints WHERE consumer = 'read-models'",
      );
      return rowCount;
    });
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

  it('logs no ?access_token=: every logged URL shows access_token=[REDACTED], however the name is encoded', async () => {
    const alice = clientFor(stack.base, `log-${randomUUID()}`);
    const id = (await alice.req('POST', '/v1/conversations', {})).body.id;
    const forged = tokenFor(alice.userId, { secret: 'not-the-secret-'.repeat(3) });
    const urls = [
      `/v1/conversations/${id}/stream?access_token=${alice.token}`,
      `/v1/conversations/${id}/stream?after=0&access%5Ftoken=${alice.token}`,
      `/v1/conversations/${id}/stream?access_token=${forged}&after=0`, // 401: logged as well
      `/v1/no-such-route?access_token=${alice.token}`, // 404 "Cannot GET <url>"
    ];
    for (const url of urls) {
      const s = openStream(stack.base + url);
      await s.until('the stream to open or fail', (f) => f.length > 0 || s.errors.length > 0);
      s.close();
    }
    const api = stack.apis[0];
    const logged = () => api.output().match(/"url":"\/v1\/[^"]*\?[^"]*"/g) ?? [];
    await waitFor('the requests in the log', () => logged().length >= urls.length);
    const signatures = [alice.token, forged].map((t) => t.split('.')[2]);
    const leaks = api
      .output()
      .split('\n')
      .filter((line) => signatures.some((sig) => line.includes(sig)));
    expect(leaks).toEqual([]);
    expect(logged()).toEqual(urls.map(() => expect.stringMatching(/access(_|%5F)token=\[REDACTED\]/)));
  });
});
