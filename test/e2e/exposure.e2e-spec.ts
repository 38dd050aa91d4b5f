/**
 * What the API shows on its public port by default, and what an operator opens on purpose
 * (docs/operations.md, "Exposure"): no /metrics on PORT (METRICS_PORT serves them), and
 * X-Forwarded-For/-Proto count only from the peers TRUST_PROXY names. The observables are the
 * request log's `remoteAddress` and the queue board cookie's `Secure`.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { freePort, startProcess, startStack, tokenFor, type Stack } from '../support/stack';
import { waitFor } from '../support/wait-for';

const BOARD = '/admin/queues';
const operator = () => tokenFor('olga', { claims: { parley_roles: ['operator'] } });
/** what a client behind no proxy may write in the headers a proxy sets */
const FORGED = { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' };

/** GET a public page with a unique query, and the API's request log line for it. */
async function loggedRequest(stack: Stack, headers: Record<string, string>): Promise<{ remoteAddress?: string }> {
  const probe = randomUUID();
  expect((await fetch(`${stack.base}/problems?probe=${probe}`, { headers })).status).toBe(200);
  const line = await waitFor(`the request log line of ${probe}`, () =>
    stack.apis[0]
      .output()
      .split('\n')
      .find((l) => l.includes(probe) && l.includes('"req"')),
  );
  return (JSON.parse(line) as { req: { remoteAddress?: string } }).req;
}

/** The Set-Cookie of a board link with a token in the query, as a browser behind `headers` opens it. */
async function boardCookie(stack: Stack, headers: Record<string, string>): Promise<string> {
  const res = await fetch(`${stack.base}${BOARD}?access_token=${operator()}`, { headers, redirect: 'manual' });
  expect(res.status).toBe(303);
  return res.headers.get('set-cookie')!;
}

describe('exposure by default (e2e)', () => {
  let stack: Stack;
  beforeAll(async () => {
    // info: request logs
    stack = await startStack({ workers: 0, env: { QUEUE_BOARD_PATH: BOARD, LOG_LEVEL: 'info' } });
  }, 60_000);
  afterAll(() => stack?.stop());

  it('serves no /metrics on the public port, by any spelling, with or without a token', async () => {
    const reader = { authorization: `Bearer ${tokenFor('alice')}` };
    for (const p of ['/metrics', '/METRICS', '/metrics/', '/metrics?x=1', '/v1/metrics']) {
      for (const headers of [{}, reader, { authorization: `Bearer ${operator()}` }]) {
        const res = await fetch(stack.base + p, { headers });
        expect([p, res.status]).toEqual([p, 404]);
        expect(await res.text()).not.toContain('parley_');
      }
    }
  });

  it("ignores a client's X-Forwarded-For: the log shows the peer's address", async () => {
    expect((await loggedRequest(stack, FORGED)).remoteAddress).toBe('127.0.0.1');
  });

  it("ignores a client's X-Forwarded-Proto: plain HTTP gets no Secure cookie", async () => {
    const cookie = await boardCookie(stack, FORGED);
    expect(cookie).toMatch(/^parley_queue_board=ey[^;]+; Path=\/admin\/queues; HttpOnly; SameSite=Strict$/);
  });
});

describe('exposure as configured: TRUST_PROXY and METRICS_PORT (e2e)', () => {
  let stack: Stack;
  let metricsPort: number;
  beforeAll(async () => {
    metricsPort = await freePort();
    stack = await startStack({
      workers: 0,
      env: {
        QUEUE_BOARD_PATH: BOARD,
        LOG_LEVEL: 'info',
        // the tests' requests come from 127.0.0.1, as a proxy on the same host would
        TRUST_PROXY: '127.0.0.1',
        METRICS_PORT: String(metricsPort),
      },
    });
  }, 60_000);
  afterAll(() => stack?.stop());

  it('serves /metrics on METRICS_PORT only, and nothing else there', async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).toContain('# TYPE parley_http_request_duration_seconds histogram');
    expect((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${stack.base}/metrics`)).status).toBe(404);
  });

  it("takes the client's address from the trusted proxy's X-Forwarded-For", async () => {
    expect((await loggedRequest(stack, FORGED)).remoteAddress).toBe('203.0.113.7');
    expect((await loggedRequest(stack, {})).remoteAddress).toBe('127.0.0.1');
  });

  it("marks the board cookie Secure behind the trusted proxy's X-Forwarded-Proto: https", async () => {
    expect(await boardCookie(stack, FORGED)).toMatch(/; Secure; SameSite=Strict$/);
    expect(await boardCookie(stack, { 'x-forwarded-proto': 'http' })).not.toMatch(/Secure/);
  });

  it('closes the metrics port when the API stops on SIGTERM', async () => {
    await stack.apis[0].kill('SIGTERM');
    expect(stack.apis[0].child.signalCode).toBe('SIGTERM');
    await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();
  });
});

describe('TRUST_PROXY refused at boot (e2e)', () => {
  it('stops the API with a message naming the variable and the forms it takes', async () => {
    const api = startProcess('api', [path.join(__dirname, '../../dist/apps/api/src/main.js')], {
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: 'x'.repeat(32),
      PORT: '0',
      TRUST_PROXY: '10.0.0.1, proxy.internal',
    });
    const code = await new Promise<number | null>((r) => api.child.once('exit', (c) => r(c)));
    expect(code).toBe(1);
    expect(api.output()).toContain(
      'TRUST_PROXY: "proxy.internal": expected true, false, a number of hops (1, 2 …), or addresses and CIDRs',
    );
  });
});
