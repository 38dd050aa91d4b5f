/**
 * The operators' queue board (Bull Board at QUEUE_BOARD_PATH) on the built API: only an operator
 * token opens it, a page load moves the token into a path-scoped cookie, its JSON API lists the
 * deployment's queues under QUEUE_PREFIX and retries a failed job, its page runs under its own CSP
 * in Chromium, and without the variable nothing answers there.
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import { Job, Queue, Worker } from 'bullmq';
import { chromium, type Browser } from 'playwright-core';
import { startStack, tokenFor, type Stack } from '../support/stack';
import { redisUrl } from '../support/test-database';
import { waitFor } from '../support/wait-for';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const BOARD = '/admin/queues';
const operator = () => tokenFor('olga', { claims: { parley_roles: ['operator'] } });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface BoardQueue {
  name: string;
  counts: Record<string, number>;
  jobs: Array<{ id: string; name: string; failedReason?: string }>;
}

describe('queue board (e2e)', () => {
  let stack: Stack;
  let prefix: string;
  let turns: Queue;
  let failed: Job;

  beforeAll(async () => {
    // no worker: the jobs stay where the test puts them
    // the tests' requests come from 127.0.0.1, as a proxy on the same host would: its X-Forwarded-Proto counts
    stack = await startStack({ workers: 0, env: { QUEUE_BOARD_PATH: BOARD, TRUST_PROXY: '127.0.0.1' } });
    prefix = stack.env.QUEUE_PREFIX;
    const connection = { url: redisUrl(), maxRetriesPerRequest: null };
    turns = new Queue('agent-turns', { connection, prefix });
    failed = await turns.add('stuck-turn', { note: 'for the board' }, { jobId: 'board-e2e-1', attempts: 1 });
    // a throwaway consumer fails the one job, then goes
    const breaker = new Worker(
      'agent-turns',
      async () => {
        throw new Error('the model provider was down');
      },
      { connection, prefix, autorun: true },
    );
    await waitFor('the job to fail', async () => (await failed.getState()) === 'failed', 15_000, 50);
    await breaker.close();
  }, 90_000);

  afterAll(async () => {
    await turns?.obliterate({ force: true }).catch(() => undefined);
    await turns?.close();
    await stack?.stop();
  });

  const get = (p: string, headers: Record<string, string> = {}) =>
    fetch(stack.base + p, { headers, redirect: 'manual' });

  it('answers 401 without a valid token and 403 to a token without the operator role, as problems', async () => {
    for (const p of [BOARD, `${BOARD}/api/queues`, `${BOARD}/static/images/logo.svg`]) {
      const none = await get(p);
      expect(none.status).toBe(401);
      expect(none.headers.get('content-type')).toContain('application/problem+json');
      expect(await none.json()).toMatchObject({ code: 'token_missing', status: 401 });

      const forged = await get(
        p,
        bearer(tokenFor('olga', { claims: { parley_roles: ['operator'] }, secret: 'x'.repeat(32) })),
      );
      expect(forged.status).toBe(401);
      expect(await forged.json()).toMatchObject({ code: 'token_invalid' });

      for (const reader of [tokenFor('reader'), tokenFor('reader', { claims: { parley_roles: ['reader'] } })]) {
        const res = await get(p, bearer(reader));
        expect(res.status).toBe(403);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(await res.json()).toMatchObject({ code: 'operator_role_required', status: 403 });
      }
    }
    // a reader's ?access_token= gets no cookie either
    const reader = await get(`${BOARD}?access_token=${tokenFor('reader')}`);
    expect(reader.status).toBe(403);
    expect(reader.headers.get('set-cookie')).toBeNull();
    // nor does a reader's token carried in a cookie open it
    expect((await get(BOARD, { cookie: `parley_queue_board=${tokenFor('reader')}` })).status).toBe(403);
  });

  it('serves the page to an operator token, under its own CSP', async () => {
    const res = await get(BOARD, bearer(operator()));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    const html = await res.text();
    expect(html).toContain(`<base href="${BOARD}/" />`);
    const script = /src="(static\/js\/main\.[^"]+\.js)"/.exec(html)![1];
    const js = await get(`${BOARD}/${script}`, bearer(operator()));
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toContain('javascript');

    // the web page's CSP is its own, untouched
    const web = await get('/');
    expect(web.headers.get('content-security-policy')).toMatch(
      /^default-src 'none'; script-src 'self'; style-src 'self';/,
    );
  });

  it('moves a ?access_token= into an HttpOnly, SameSite=Strict cookie on the board path, and takes the cookie after', async () => {
    const first = await get(`${BOARD}?access_token=${operator()}`);
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe(BOARD); // the token leaves the address bar
    const setCookie = first.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^parley_queue_board=ey[^;]+; Path=\/admin\/queues; HttpOnly; SameSite=Strict$/);
    const cookie = setCookie.split(';')[0];

    const page = await get(BOARD, { cookie });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root">');
    expect((await get(`${BOARD}/api/queues`, { cookie })).status).toBe(200);
    // the cookie is scoped to the board: the API proper still wants its bearer token
    expect((await get('/v1/books', { cookie })).status).toBe(401);

    // behind TLS (X-Forwarded-Proto from the proxy TRUST_PROXY names) the cookie is Secure, other query kept
    const tls = await get(`${BOARD}/queue/x?access_token=${operator()}&status=failed`, {
      'x-forwarded-proto': 'https',
    });
    expect(tls.headers.get('location')).toBe(`${BOARD}/queue/x?status=failed`);
    expect(tls.headers.get('set-cookie')).toMatch(/; Secure;|; Secure$/);

    // an expired token in the cookie is refused and the cookie dropped
    const expired = await get(BOARD, {
      cookie: `parley_queue_board=${tokenFor('olga', { ttlSeconds: -60, claims: { parley_roles: ['operator'] } })}`,
    });
    expect(expired.status).toBe(401);
    expect(await expired.json()).toMatchObject({ code: 'token_expired' });
    expect(expired.headers.get('set-cookie')).toMatch(
      /^parley_queue_board=; Path=\/admin\/queues; Expires=Thu, 01 Jan 1970/,
    );
  });

  it("lists both queues under the deployment's prefix with the failed job, and retries it to waiting", async () => {
    const name = `${prefix}:agent-turns`;
    const list = await get(
      `${BOARD}/api/queues?activeQueue=${encodeURIComponent(name)}&status=failed`,
      bearer(operator()),
    );
    expect(list.status).toBe(200);
    const { queues } = (await list.json()) as { queues: BoardQueue[] };
    expect(queues.map((q) => q.name).sort()).toEqual([`${prefix}:agent-turns`, `${prefix}:book-ingest`]);
    const board = queues.find((q) => q.name === name)!;
    expect(board.counts.failed).toBe(1);
    expect(board.jobs).toEqual([
      expect.objectContaining({ id: 'board-e2e-1', name: 'stuck-turn', failedReason: 'the model provider was down' }),
    ]);

    const retry = await fetch(`${stack.base}${BOARD}/api/queues/${encodeURIComponent(name)}/board-e2e-1/retry`, {
      method: 'PUT',
      headers: bearer(operator()),
    });
    expect(retry.status).toBe(204);
    expect(await failed.getState()).toBe('waiting');

    // a reader cannot retry
    const refused = await fetch(`${stack.base}${BOARD}/api/queues/${encodeURIComponent(name)}/retry/failed`, {
      method: 'PUT',
      headers: bearer(tokenFor('reader')),
    });
    expect(refused.status).toBe(403);
  });

  /** A request with its path sent verbatim (fetch would normalise `.` segments and some escapes). */
  const raw = (method: string, p: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(stack.base);
      const req = http.request({ host: url.hostname, port: url.port, method, path: p, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end();
    });

  it('checks every spelling of a board path the router gives to the board, and changes nothing without a token', async () => {
    const name = `${prefix}:agent-turns`;
    const spellings = [
      '/admin/queue%73/api/queues',
      '/%61dmin/queues/api/queues',
      '/ADMIN/QUEUES/api/queues',
      '/Admin/Queues/API/queues',
      '/admin/queues/api/queues/',
      '/admin/queues//api/queues',
      '//admin/queues/api/queues',
      '/admin/queues/./api/queues',
      '/admin/x/../queues/api/queues',
      '/admin/queues/api/queues.',
      '/admin/queues;x=1/api/queues',
      '/admin/queues/api/queues;x=1',
      '/admin%2Fqueues/api/queues',
      '/admin/queues%2Fapi%2Fqueues',
      '/admin/queues/api/queues%3Fx',
      '/admin/queues/api/queues?x=/',
      '/admin/queues/api/queue%73?status=failed',
      `/admin/queues/api/queues?activeQueue=${encodeURIComponent(name)}&status=failed`,
    ];
    let routed = 0;
    for (const p of spellings) {
      const opened = await raw('GET', p, bearer(operator()));
      const refused = await raw('GET', p);
      expect(refused.body).not.toContain('board-e2e-1');
      expect(refused.body).not.toContain('agent-turns');
      if (opened.status === 200) {
        routed++;
        expect([p, refused.status]).toEqual([p, 401]);
        expect(JSON.parse(refused.body)).toMatchObject({ code: 'token_missing' });
      } else {
        // a 404: the API's, or the board's own behind its check
        expect([p, opened.status]).toEqual([p, 404]);
        expect([401, 404]).toContain(refused.status);
      }
    }
    expect(routed).toBeGreaterThanOrEqual(6); // the spellings the router decodes to the board did reach it

    // the board's writes, spelled so a check on the raw URL missed them: refused, and nothing changes
    const waitingBefore = await turns.getWaitingCount();
    const writes: Array<[string, string]> = [
      ['PUT', '/admin/queue%73/api/queues/pause'],
      ['PUT', `/admin/queue%73/api/queues/${encodeURIComponent(name)}/pause`],
      ['PUT', `/ADMIN/queues/api/queues/${encodeURIComponent(name)}/empty`],
      ['PUT', `/admin/queues//api/queues/${encodeURIComponent(name)}/obliterate`],
      ['PUT', `/admin/queue%73/api/queues/${encodeURIComponent(name)}/clean/failed`],
      ['POST', '/admin/queue%73/api/queues/pause'],
    ];
    for (const [method, p] of writes) {
      const res = await raw(method, p);
      expect([method, p, res.status]).toEqual([method, p, method === 'PUT' ? 401 : res.status]);
      expect(res.status).not.toBe(200);
      expect(res.status).not.toBe(204);
    }
    expect(await turns.isPaused()).toBe(false);
    expect(await turns.getWaitingCount()).toBe(waitingBefore);
    expect(await turns.getJob('board-e2e-1')).toBeDefined();
  });

  it('keeps the board out of the OpenAPI document', async () => {
    const doc = (await (await get('/docs-json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith(BOARD) || p.includes('queues'))).toEqual([]);
  });

  describe('in Chromium', () => {
    let browser: Browser;
    beforeAll(async () => {
      if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium`);
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      });
    }, 60_000);
    afterAll(() => browser?.close());

    it('opens with ?access_token=, renders both queues, and its CSP refuses nothing of its own', async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const refused: string[] = [];
      const errors: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) refused.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`${stack.base}${BOARD}?access_token=${operator()}`);
      expect(new URL(page.url()).search).toBe('');
      await page.getByText('agent-turns').first().waitFor({ timeout: 20_000 });
      await page.getByText('book-ingest').first().waitFor();
      await page.goto(`${stack.base}${BOARD}/queue/${encodeURIComponent(`${prefix}:agent-turns`)}?status=waiting`);
      await page.getByText('stuck-turn').first().waitFor({ timeout: 20_000 });
      // the only thing refused is the template's Google Fonts stylesheet (docs/security.md)
      expect(refused.filter((t) => !t.includes('fonts.googleapis.com'))).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    }, 60_000);
  });
});

describe('queue board unset (e2e)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workers: 0 });
  }, 60_000);
  afterAll(() => stack?.stop());

  it('answers 404 at the path, as any unknown route, even to an operator', async () => {
    for (const p of [BOARD, `${BOARD}/api/queues`]) {
      const res = await fetch(stack.base + p, { headers: bearer(operator()) });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'not_found' });
    }
  });
});
