/**
 * CORS (docs/cors.md) in a real browser: Debian's Chromium, driven by playwright-core, opens an
 * app's page served from another origin (another port) than the API, and that page, with plain
 * fetch and EventSource as an app would, starts a conversation, posts, streams the answer, resumes
 * the stream with Last-Event-ID and cancels a turn. A page on an origin not in CORS_ORIGINS is
 * refused by the browser; preflights are checked over plain HTTP too.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import type { FakeReply, RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { freePort } from '../support/stack';
import { useReaderStack } from '../support/use-stack';
import { launchChromium } from '../support/web-browser';

const SLOW_ANSWER = Array.from({ length: 40 }, (_, i) => `Sentence ${i + 1}.`).join(' ');

/** A question with SLOW gets an answer streamed slowly (time to cancel it); any other a short one. */
function model(req: RecordedRequest): FakeReply {
  const last = req.body.messages[req.body.messages.length - 1];
  const text = JSON.stringify(last.content);
  if (text.includes('SLOW')) return { content: [{ type: 'text', text: SLOW_ANSWER }], delayMsPerChunk: 300 };
  return { content: [{ type: 'text', text: 'Marisol carried a brass telescope.' }], delayMsPerChunk: 20 };
}

/**
 * The app's page: its script talks to the API on another origin, as a reader app would. Each
 * function resolves with what the page saw, so the spec can check it.
 */
const APP_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>reader app</title></head><body>
<script>
async function call(api, token, method, path, body, headers = {}) {
  const res = await fetch(api + path, {
    method,
    headers: { Authorization: 'Bearer ' + token, ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, etag: res.headers.get('ETag'), body: await res.json().catch(() => null) };
}
/** EventSource (the query token: it sends no headers) until the turn's end; \`firstDelta\` once its answer streams. */
function streamUntilEnd(api, token, id, turnId) {
  let sawDelta;
  const firstDelta = new Promise((r) => (sawDelta = r));
  const ended = new Promise((resolve, reject) => {
    const types = [];
    const es = new EventSource(api + '/v1/conversations/' + id + '/stream?access_token=' + encodeURIComponent(token));
    const timer = setTimeout(() => { es.close(); reject(new Error('no end: ' + types.join(','))); }, 20000);
    let deltas = 0;
    es.addEventListener('AssistantTextDelta', () => {
      deltas++;
      sawDelta();
    });
    for (const type of ['UserMessagePosted', 'AssistantReplied', 'TurnFailed', 'TurnCancelled']) {
      es.addEventListener(type, (e) => {
        const env = JSON.parse(e.data);
        types.push(type);
        if (type !== 'UserMessagePosted' && env.data.turnId === turnId) {
          clearTimeout(timer);
          es.close();
          resolve({ type, version: env.version, lastEventId: e.lastEventId, deltas, types });
        }
      });
    }
  });
  return { ended, firstDelta };
}
/** fetch's stream of the SSE route with Authorization and Last-Event-ID: the frames' event names until \`until\`. */
async function resumeUntil(api, token, id, lastEventId, until) {
  const controller = new AbortController();
  const res = await fetch(api + '/v1/conversations/' + id + '/stream', {
    headers: { Authorization: 'Bearer ' + token, 'Last-Event-ID': String(lastEventId) },
    signal: controller.signal,
  });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  const deadline = Date.now() + 20000;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    if (text.includes('event: ' + until)) break;
  }
  controller.abort();
  return { status: res.status, events: [...text.matchAll(/^event: (\\w+)$/gm)].map((m) => m[1]) };
}
window.app = { call, streamUntilEnd, resumeUntil };
</script></body></html>`;

/** Serves the app's page at `/` on a port of its own: its origin is not the API's. */
async function servePage(port: number): Promise<http.Server> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(APP_PAGE);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return server;
}

describe('CORS (e2e, Chromium)', () => {
  let browser: Browser;
  let allowed: http.Server;
  let refused: http.Server;
  let allowedOrigin = '';
  let refusedOrigin = '';
  beforeAll(async () => {
    allowed = await servePage(await freePort());
    refused = await servePage(await freePort());
    allowedOrigin = `http://localhost:${(allowed.address() as AddressInfo).port}`;
    refusedOrigin = `http://localhost:${(refused.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    allowed?.close();
    refused?.close();
  });
  const s = useReaderStack({
    fake: { defaultResponder: model },
    // another origin beside the app's: the list is exact origins, comma-separated
    env: () => ({ CORS_ORIGINS: `https://app.example.com, ${allowedOrigin}` }),
    timeoutMs: 90_000,
  });

  async function open(origin: string): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    return page;
  }

  it('a page on an allowed origin posts, streams the answer, resumes with Last-Event-ID and cancels a turn', async () => {
    const page = await open(allowedOrigin);
    const args = { api: s.stack.base, token: s.alice.token, bookId: s.bookId };

    const result = await page.evaluate(async ({ api, token, bookId }) => {
      const app = (globalThis as any).app;
      const started = await app.call(api, token, 'POST', '/v1/conversations', { bookId });
      const id = started.body.id;
      const read = await app.call(api, token, 'GET', `/v1/conversations/${id}`);
      // the ETag is exposed, and If-Match (a preflighted header) is let through
      const renamed = await app.call(
        api,
        token,
        'PATCH',
        `/v1/conversations/${id}`,
        { title: 'From the app' },
        {
          'If-Match': `"${read.body.version}"`,
        },
      );
      const posted = await app.call(
        api,
        token,
        'POST',
        `/v1/conversations/${id}/messages`,
        { content: 'Who?' },
        {
          'Idempotency-Key': `key-${id}`,
        },
      );
      const first = await app.streamUntilEnd(api, token, id, posted.body.turnId).ended;

      const slow = await app.call(api, token, 'POST', `/v1/conversations/${id}/messages`, { content: 'SLOW please' });
      const streaming = app.streamUntilEnd(api, token, id, slow.body.turnId);
      await streaming.firstDelta; // the answer is being written: cancel it midway
      const cancel = await app.call(api, token, 'POST', `/v1/conversations/${id}/turns/${slow.body.turnId}/cancel`);
      const second = await streaming.ended;
      const resumed = await app.resumeUntil(api, token, id, first.lastEventId, 'TurnCancelled');
      return {
        started: started.status,
        etag: read.etag,
        renamed: renamed.status,
        posted: posted.status,
        first,
        cancel,
        second,
        resumed,
      };
    }, args);

    expect(result.started).toBe(201);
    expect(result.etag).toMatch(/^W\/"/);
    expect(result.renamed).toBe(200);
    expect(result.posted).toBe(202);
    expect(result.first).toMatchObject({ type: 'AssistantReplied' });
    expect(result.cancel.status).toBe(202);
    expect(result.second.type).toBe('TurnCancelled');
    // the answer streamed live (delta frames) until the cancel stopped it
    expect(result.second.deltas).toBeGreaterThan(0);
    // resumed after the first answer: the second turn's events, not the first's again
    expect(result.resumed.status).toBe(200);
    expect(result.resumed.events).toContain('UserMessagePosted');
    expect(result.resumed.events).toContain('TurnCancelled');
    expect(result.resumed.events).not.toContain('ConversationStarted');
    await page.close();
  }, 60_000);

  it('a page on an origin not in CORS_ORIGINS is refused by the browser', async () => {
    const page = await open(refusedOrigin);
    const outcome = await page.evaluate(
      async ({ api, token }) => {
        try {
          await (globalThis as any).app.call(api, token, 'GET', '/v1/conversations');
          return 'answered';
        } catch (e) {
          return `refused: ${String(e)}`;
        }
      },
      { api: s.stack.base, token: s.alice.token },
    );
    expect(outcome).toMatch(/^refused: TypeError/);
    await page.close();
  });

  it('preflights name the allowed headers for an allowed origin, and nothing for another', async () => {
    const preflight = (origin: string) =>
      fetch(`${s.stack.base}/v1/conversations/00000000-0000-4000-8000-000000000000/messages`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,idempotency-key,if-match,last-event-id,content-type',
        },
      });
    const ok = await preflight(allowedOrigin);
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(allowedOrigin);
    const allowedHeaders = ok.headers.get('access-control-allow-headers')!.toLowerCase();
    for (const h of ['authorization', 'idempotency-key', 'if-match', 'last-event-id', 'content-type'])
      expect(allowedHeaders).toContain(h);
    expect(ok.headers.get('access-control-allow-methods')).toContain('POST');

    const no = await preflight(refusedOrigin);
    expect(no.headers.get('access-control-allow-origin')).toBeNull();

    // a refused token still answers with CORS headers, so the app can read the 401
    const unauthorized = await fetch(`${s.stack.base}/v1/conversations`, { headers: { origin: allowedOrigin } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe(allowedOrigin);
    expect(unauthorized.headers.get('access-control-expose-headers')?.split(/,\s*/)).toEqual([
      'ETag',
      'Location',
      'Retry-After',
      'WWW-Authenticate',
    ]);
  });

  it("lets /mcp be called from the API's own origin and the allowed ones, and refuses any other origin 403", async () => {
    const initialize = (origin?: string) =>
      fetch(`${s.stack.base}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${s.alice.token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(origin ? { origin } : {}),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } },
        }),
      });
    for (const origin of [refusedOrigin, 'https://evil.example', 'null']) {
      const refused = await initialize(origin);
      expect([origin, refused.status]).toEqual([origin, 403]);
      expect(((await refused.json()) as { code: string }).code).toBe('origin_not_allowed');
    }
    for (const origin of [undefined, allowedOrigin, s.stack.base]) {
      const answered = await initialize(origin);
      expect([origin, answered.status]).toEqual([origin, 200]);
      await answered.body?.cancel();
    }
  });
});
