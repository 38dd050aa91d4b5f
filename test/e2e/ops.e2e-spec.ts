import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot } from '@parley/platform';
import { expectOk, expectProblem, isEvent } from '../support/api';
import { Client, clientFor, freePort, startStack, Stack, tokenFor } from '../support/stack';
import { waitFor } from '../support/wait-for';
import { openStream } from '../support/sse-client';

/** What an operator relies on: the rate limit, the metrics and the logs. */
const newConversation = async (c: Client) => expectOk(await c.api.POST('/v1/conversations', { body: {} }), 201).id;
const postMessage = (c: Client, id: string, content: string, idempotencyKey?: string) =>
  c.api.POST('/v1/conversations/{id}/messages', {
    params: { path: { id }, header: idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {} },
    body: { content },
  });

describe('operations (e2e)', () => {
  let stack: Stack;
  let metricsPort: number;

  beforeAll(async () => {
    metricsPort = await freePort();
    // info: the request logs are the ones that carry URLs
    stack = await startStack({
      env: {
        RATE_LIMIT_POSTS_PER_MIN: '3',
        AGENT_ENABLED: 'false',
        LOG_LEVEL: 'info',
        METRICS_PORT: String(metricsPort),
      },
    });
  }, 60_000);
  afterAll(() => stack?.stop());

  it("answers GET /version without a token: package.json's version and the commit the build was made from", async () => {
    const res = await fetch(`${stack.base}/version`);
    expect(res.status).toBe(200);
    const { version } = JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as {
      version: string;
    };
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: projectRoot(), encoding: 'utf8' }).trim();
    expect(await res.json()).toEqual({ version, commit: head });
  });

  it('answers 429 with Retry-After past RATE_LIMIT_POSTS_PER_MIN, per user, appending nothing', async () => {
    const alice = clientFor(stack.base, `rl-${randomUUID()}`);
    const bob = clientFor(stack.base, `rl-${randomUUID()}`);
    const id = await newConversation(alice);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await postMessage(alice, id, `m${i}`)).response.status);
    expect(statuses).toEqual([202, 202, 202, 429]);
    const limited = await postMessage(alice, id, 'again');
    expect(expectProblem(limited, 429)).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(Number(limited.response.headers.get('retry-after'))).toBeGreaterThan(0);
    const { items: events } = expectOk(
      await alice.api.GET('/v1/conversations/{id}/events', { params: { path: { id } } }),
    );
    expect(events.filter(isEvent('UserMessagePosted'))).toHaveLength(3);
    const bobs = await newConversation(bob);
    expectOk(await postMessage(bob, bobs, 'mine'), 202);
  });

  it('counts each prompt of a batch as a post against the rate limit', async () => {
    const batchOf = (c: ReturnType<typeof clientFor>, id: string, prompts: string[]) =>
      c.req('POST', `/v1/conversations/${id}/batches`, { prompts, mode: 'sequential' });
    const alice = clientFor(stack.base, `rl-${randomUUID()}`);
    const id = await newConversation(alice);
    expect((await batchOf(alice, id, ['a', 'b'])).status).toBe(202);
    expect((await postMessage(alice, id, 'one more')).response.status).toBe(202);
    expect((await batchOf(alice, id, ['c'])).status).toBe(429);
    const bob = clientFor(stack.base, `rl-${randomUUID()}`);
    const bobs = await newConversation(bob);
    expect((await batchOf(bob, bobs, ['a', 'b', 'c', 'd'])).status).toBe(429); // 4 posts, 3 a minute
  });

  it('gives a retry with the same Idempotency-Key its first answer at the rate limit, not a 429', async () => {
    const alice = clientFor(stack.base, `rl-${randomUUID()}`);
    const id = await newConversation(alice);
    const post = (content: string, key: string) => postMessage(alice, id, content, key);
    const firsts = [];
    for (let i = 0; i < 3; i++) firsts.push(await post(`m${i}`, `k${i}`));
    expect(firsts.map((r) => r.response.status)).toEqual([202, 202, 202]);
    expect(expectProblem(await post('m3', 'k3'), 429).code).toBe('rate_limited');
    const retry = await post('m0', 'k0');
    expect([retry.response.status, retry.data]).toEqual([202, firsts[0].data]);
    expect(expectProblem(await post('not m0', 'k0'), 422).code).toBe('idempotency_key_reused');
  });

  it('exposes Prometheus metrics on METRICS_PORT: requests, SSE streams, queue depth, consumer lag', async () => {
    const alice = clientFor(stack.base, `m-${randomUUID()}`);
    const id = await newConversation(alice);
    expectOk(await postMessage(alice, id, 'queued, never answered here'), 202);
    const s = openStream(`${stack.base}/v1/conversations/${id}/stream`, { token: alice.token });
    await s.until('the stream to open', (f) => f.length > 0);
    // the lag is read from the worker's checkpoint, written once it has projected a first batch
    await waitFor('the worker to checkpoint its projections', async () => {
      const { rowCount } = await stack.db.pool.query(
        "SELECT 1 FROM consumer_checkpoints WHERE consumer = 'read-models'",
      );
      return rowCount;
    });
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    s.close();
    // the API's own port serves none of it, to anyone
    expect((await fetch(`${stack.base}/metrics`)).status).toBe(404);
    expect((await alice.req('GET', '/metrics')).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/v1/books`)).status).toBe(404);
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
    const id = await newConversation(alice);
    // raw: tokens in the query string, under encoded names, forged; an unknown route
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

  it('writes a heap snapshot on SIGUSR2 and goes on serving: a diagnostic signal is not a shutdown', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'parley-heap-'));
    const diag = await startStack({
      env: { AGENT_ENABLED: 'false' },
      nodeArgs: ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`],
    });
    try {
      const procs = [...diag.apis, ...diag.workers];
      const exits = procs.map((p) => new Promise<string>((r) => p.child.once('exit', () => r(p.name))));
      procs.forEach((p) => p.child.kill('SIGUSR2'));
      await waitFor('a snapshot from each process', () => readdirSync(dir).length >= procs.length, 30_000);
      // a shutdown takes its hooks' time (a worker's drain, the API's SSE goodbyes), then exits
      const exited = await Promise.race([...exits, new Promise((r) => setTimeout(() => r('none'), 10_000))]);
      expect(exited).toBe('none');
      expect(readdirSync(dir)).toHaveLength(procs.length); // one each: the signal was not raised again
      const alice = clientFor(diag.base, `heap-${randomUUID()}`);
      await newConversation(alice);
    } finally {
      await diag.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
