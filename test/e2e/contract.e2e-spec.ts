import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createParleyClient, ParleyClient } from '@parley/api-client';
import { tinyBookMarkdown, waitForBook } from '../support/factories/books';
import { PrismProxy, servedDocument, startPrism, Violation, violationsOf } from '../support/prism';
import { clientFor, Client, startStack, Stack, TEST_JWT_SECRET, tokenFor } from '../support/stack';
import { waitFor } from '../support/wait-for';

/**
 * The API against its own OpenAPI document, judged by an independent validator: every request
 * goes through Stoplight Prism's validating proxy, which checks the request and the answer
 * against the document the API serves. Every operation is called, well-formed and with the
 * mistakes clients make; the test fails on any violation, any 5xx, any error that is not an RFC
 * 9457 problem (application/problem+json with a `code` and the `status`), and any operation of
 * the document that nothing here calls (a new endpoint needs its contract calls). It also fails
 * when the served document differs from the checked-in docs/openapi.json (run `npm run openapi`).
 * Header formats (If-Match, Idempotency-Key, Last-Event-ID) and cursors count as mistakes no
 * schema shows; a body that Prism cannot parse (malformed JSON: its proxy never answers) and the
 * conversation stream (it never ends) go straight to the API, and Prism's validator checks their
 * answers.
 *
 *   npm run build && npx jest test/e2e/contract.e2e-spec.ts
 *
 * Each verdict prints a table of departures, one line per operation, status and finding, with
 * the calls that showed it. CONTRACT_REPORT=<file> also writes every call (method, path, status,
 * body, Prism's violations) as JSON.
 */

const RATE_LIMIT = 8; // posts a minute per user: every user below posts less often, but eve

/** What one call was meant to be. */
interface Intent {
  label: string;
  /** the statuses the API should answer */
  expect: number[];
  /**
   * `valid`: a request the document must accept (no request violation);
   * `schema`: a mistake the document can describe, so Prism must see a request violation too;
   * `opaque`: a mistake no schema can show (a bad signature, an unknown id, a cursor's content).
   */
  kind: 'valid' | 'schema' | 'opaque';
  /**
   * for `schema` mistakes, where Prism's request violation must be (a location prefix such as
   * `request.body`, or `security` for a missing token), so that another violation of the same
   * request (a header the document wrongly requires) does not pass for it
   */
  where?: string;
}

interface Call extends Intent {
  method: string;
  url: string;
  /** METHOD /template of the document's operation, when one matches */
  operation?: string;
  via: 'prism' | 'direct';
  status: number;
  contentType: string;
  headers: Record<string, string>;
  text: string;
  body: any;
  violations: Violation[];
}

interface Departure {
  call: Call;
  what: string;
}

const ROOT = path.resolve(__dirname, '../..');

describe('API contract: every operation through Prism against the served OpenAPI document (e2e)', () => {
  let stack: Stack;
  let prism: PrismProxy;
  let doc: any;
  let operations: Array<{ key: string; method: string; template: string; regex: RegExp; op: any }>;
  const calls: Call[] = [];
  /** calls made straight to the API, checked by Prism's validator before the verdict */
  const directExchanges: Array<{
    call: Call;
    request: { method: string; url: string };
    response: { status: number; headers: Headers; body: unknown };
  }> = [];

  // users: each one's posts stay under the rate limit, but `eve`'s, who exceeds it
  let alice: Client;
  let bob: Client;
  let carol: Client;
  let eve: Client;
  let api: ParleyClient;
  let pending: Intent | undefined;

  beforeAll(async () => {
    // no worker at first: books stay `ingesting` and turns stay running until the worker starts,
    // which makes book_not_ready, book_ingest_busy and turn_in_progress deterministic
    stack = await startStack({
      apis: 1,
      workers: 0,
      env: { RATE_LIMIT_POSTS_PER_MIN: String(RATE_LIMIT), LLM_PROVIDER: 'scripted' },
    });
    doc = await servedDocument(stack.base);
    prism = await startPrism(doc, stack.base);
    operations = [];
    for (const [template, item] of Object.entries<any>(doc.paths ?? {})) {
      for (const method of ['get', 'put', 'post', 'patch', 'delete', 'head', 'options']) {
        if (!item[method]) continue;
        const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
        operations.push({
          key: `${method.toUpperCase()} ${template}`,
          method: method.toUpperCase(),
          template,
          regex: new RegExp(`^${pattern}$`),
          op: item[method],
        });
      }
    }
    // literal paths before templated ones
    operations.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
    alice = clientFor(prism.base, `alice-${randomUUID()}`);
    bob = clientFor(prism.base, `bob-${randomUUID()}`);
    carol = clientFor(prism.base, `carol-${randomUUID()}`);
    eve = clientFor(prism.base, `eve-${randomUUID()}`);
    api = createParleyClient({ baseUrl: prism.base, token: alice.token, fetch: recordingFetch });
  }, 60_000);

  afterAll(async () => {
    await prism?.stop();
    await stack?.stop();
  });

  const operationOf = (method: string, url: string) => {
    const pathname = new URL(url, 'http://x').pathname;
    return operations.find((o) => o.method === method && o.regex.test(pathname))?.key;
  };

  async function record(
    intent: Intent,
    method: string,
    url: string,
    r: Response,
    via: Call['via'],
    violations?: Violation[],
  ): Promise<Call> {
    const text = await r.text();
    let body: any;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const call: Call = {
      ...intent,
      method,
      url,
      operation: operationOf(method, url),
      via,
      status: r.status,
      contentType: r.headers.get('content-type') ?? '',
      headers: Object.fromEntries(r.headers.entries()),
      text,
      body,
      violations: violations ?? violationsOf(r.headers),
    };
    calls.push(call);
    return call;
  }

  /** The fetch the generated client uses: through Prism, recorded under the intent set by `typed`. */
  async function recordingFetch(info: string | URL | Request, init?: RequestInit): Promise<Response> {
    const input = new Request(info, init);
    const intent = pending ?? { label: 'typed client call', expect: [200], kind: 'valid' };
    pending = undefined;
    const r = await fetch(input);
    const url = new URL(input.url);
    await record(intent, input.method, url.pathname + url.search, r.clone(), 'prism');
    return r;
  }

  /** A well-formed call made with the generated client; answers the recorded call. */
  async function typed(label: string, expect: number | number[], run: (c: ParleyClient) => Promise<unknown>) {
    pending = { label, expect: [expect].flat(), kind: 'valid' };
    await run(api);
    return calls[calls.length - 1];
  }

  /** A raw request through Prism: for mistakes, other users and what the typed client cannot send. */
  async function send(
    intent: { label: string; expect: number | number[]; kind?: Intent['kind']; where?: string },
    method: string,
    url: string,
    opts: { as?: Client | null; token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Call> {
    const headers: Record<string, string> = {};
    const token = opts.token ?? (opts.as === null ? undefined : (opts.as ?? alice).token);
    if (token) headers.authorization = `Bearer ${token}`;
    let body: RequestInit['body'];
    if (opts.body instanceof FormData) body = opts.body;
    else if (typeof opts.body === 'string') {
      body = opts.body;
      headers['content-type'] = 'application/json';
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    Object.assign(headers, opts.headers);
    const r = await fetch(prism.base + url, { method, headers, body, signal: AbortSignal.timeout(15_000) });
    return record(
      { label: intent.label, expect: [intent.expect].flat(), kind: intent.kind ?? 'valid', where: intent.where },
      method,
      url,
      r,
      'prism',
    );
  }

  /**
   * A call straight to the API whose answer Prism's validator checks in this process: for
   * requests its proxy cannot carry (it never answers a body that is not JSON under a JSON
   * content type) and streams that stay open.
   */
  async function direct(
    intent: { label: string; expect: number | number[]; kind?: Intent['kind'] },
    method: string,
    url: string,
    init: RequestInit,
    readBody: (r: Response) => Promise<string> = (r) => r.text(),
  ): Promise<Call> {
    const r = await fetch(stack.base + url, init);
    const text = await readBody(r);
    let body: any = text;
    if (/json/.test(r.headers.get('content-type') ?? '')) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const call = await record(
      { label: intent.label, expect: [intent.expect].flat(), kind: intent.kind ?? 'valid' },
      method,
      url,
      new Response(r.status === 204 ? null : text, { status: r.status, headers: r.headers }),
      'direct',
      [],
    );
    directExchanges.push({ call, request: { method, url }, response: { status: r.status, headers: r.headers, body } });
    return call;
  }

  const bookJson = (title = 'The Lighthouse Keeper') => ({
    title,
    author: 'A. Tester',
    format: 'markdown',
    content: tinyBookMarkdown(),
  });

  // ids shared by the scenarios below
  let bookId: string; // ready once the worker runs
  let spareBookId: string; // uploaded as a multipart file, deleted at the end
  let pendingConversation: string;
  let pendingTurn: string;

  describe('before the worker starts (books ingesting, turns running)', () => {
    it('uploads books as JSON and multipart; a third one at once is 429 book_ingest_busy', async () => {
      const created = await typed('upload a book (JSON)', 202, (c) => c.POST('/v1/books', { body: bookJson() as any }));
      bookId = created.body?.id;
      expect(bookId).toBeTruthy();
      const form = new FormData();
      form.append('title', 'Spare');
      form.append('file', new Blob([tinyBookMarkdown()], { type: 'text/markdown' }), 'spare.md');
      spareBookId = (
        await send({ label: 'upload a book (multipart)', expect: 202 }, 'POST', '/v1/books', { body: form })
      ).body?.id;
      expect(spareBookId).toBeTruthy();
      await send({ label: 'upload a third book while two ingest', expect: 429 }, 'POST', '/v1/books', {
        body: bookJson('Busy'),
      });
    });

    it('answers 409 book_not_ready for a book still ingesting', async () => {
      await send({ label: 'search a book still ingesting', expect: 409 }, 'GET', `/v1/books/${bookId}/search?q=lamp`);
      await send(
        { label: 'start a conversation about a book still ingesting', expect: 409 },
        'POST',
        '/v1/conversations',
        {
          body: { bookId },
        },
      );
    });

    it('answers 409 turn_in_progress to ?multitask=reject while a turn runs, then cancels it', async () => {
      pendingConversation = (
        await typed('start a conversation (no book)', 201, (c) =>
          c.POST('/v1/conversations', { body: { title: 'Pending' } }),
        )
      ).body?.id;
      const posted = await send(
        { label: 'post a message (its turn stays running: no worker)', expect: 202 },
        'POST',
        `/v1/conversations/${pendingConversation}/messages`,
        { body: { content: 'Who keeps the lighthouse?' } },
      );
      pendingTurn = posted.body?.turnId;
      await send(
        { label: 'post with ?multitask=reject while a turn runs', expect: 409 },
        'POST',
        `/v1/conversations/${pendingConversation}/messages?multitask=reject`,
        { body: { content: 'And the lamp?' } },
      );
      const cancelled = await typed('cancel a running turn', 202, (c) =>
        c.POST('/v1/conversations/{id}/turns/{turnId}/cancel', {
          params: { path: { id: pendingConversation, turnId: pendingTurn } },
        }),
      );
      expect(cancelled.body).toEqual({ turnId: pendingTurn, cancelled: true });
      await typed('cancel a turn that already ended', 202, (c) =>
        c.POST('/v1/conversations/{id}/turns/{turnId}/cancel', {
          params: { path: { id: pendingConversation, turnId: pendingTurn } },
        }),
      );
      await send(
        { label: 'cancel an unknown turn', expect: 404, kind: 'opaque' },
        'POST',
        `/v1/conversations/${pendingConversation}/turns/${randomUUID()}/cancel`,
      );
    });
  });

  describe('the happy path', () => {
    let conversationId: string;
    let turnId: string;

    beforeAll(async () => {
      await stack.startWorker();
      const own = clientFor(stack.base, alice.userId);
      await waitForBook(own, bookId);
      await waitForBook(own, spareBookId);
    }, 60_000);

    it('health, readiness and metrics', async () => {
      await typed('liveness', 200, (c) => c.GET('/healthz'));
      await typed('readiness', 200, (c) => c.GET('/readyz'));
      await typed('metrics', 200, (c) => c.GET('/metrics', { parseAs: 'text' }));
    });

    it('the development token endpoint is off outside development', async () => {
      await typed('dev token in production', 404, (c) => c.POST('/v1/dev/token', { body: { userId: 'alice' } }));
    });

    it('the problem catalogue, where problem types lead', async () => {
      await typed('list problem kinds', 200, (c) => c.GET('/problems'));
      await typed('show a problem kind', 200, (c) =>
        c.GET('/problems/{code}', { params: { path: { code: 'version_conflict' } } }),
      );
      await typed('an unknown problem kind', 404, (c) =>
        c.GET('/problems/{code}', { params: { path: { code: 'no_such_code' } } }),
      );
    });

    it('books: list, show, search, follow the ingestion (SSE)', async () => {
      await typed('list books', 200, (c) => c.GET('/v1/books'));
      const shown = await typed('show a book', 200, (c) =>
        c.GET('/v1/books/{id}', { params: { path: { id: bookId } } }),
      );
      expect(shown.body?.status).toBe('ready');
      const found = await typed('search a book', 200, (c) =>
        c.GET('/v1/books/{id}/search', { params: { path: { id: bookId }, query: { q: 'lamp', k: 3 } } }),
      );
      expect(found.body?.items?.length).toBeGreaterThan(0);
      // a ready book's event stream sends `ready` and ends at once, so it passes through the proxy
      const sse = await send({ label: 'follow a ready book (SSE)', expect: 200 }, 'GET', `/v1/books/${bookId}/events`, {
        headers: { accept: 'text/event-stream' },
      });
      expect(sse.contentType).toMatch(/^text\/event-stream/);
      expect(sse.text).toMatch(/event: ready\ndata: \{/);
    });

    it('conversations: create, list, show, show ?version, patch, post, messages, events, fork, delete', async () => {
      const created = await typed('start a conversation about a book', 201, (c) =>
        c.POST('/v1/conversations', { body: { bookId, title: 'Lamps', readingPosition: 2 } as any }),
      );
      conversationId = created.body?.id;
      expect(conversationId).toBeTruthy();
      await typed('list conversations', 200, (c) => c.GET('/v1/conversations', { params: { query: { limit: 10 } } }));
      await typed('list conversations about a book', 200, (c) =>
        c.GET('/v1/conversations', { params: { query: { bookId } } }),
      );
      await typed('show a conversation', 200, (c) =>
        c.GET('/v1/conversations/{id}', { params: { path: { id: conversationId } } }),
      );
      await typed('show a past version', 200, (c) =>
        c.GET('/v1/conversations/{id}', { params: { path: { id: conversationId }, query: { version: 1 } } }),
      );
      await typed('rename with If-Match', 200, (c) =>
        c.PATCH('/v1/conversations/{id}', {
          params: { path: { id: conversationId }, header: { 'If-Match': '"1"' } },
          body: { title: 'Lamps and storms' },
        }),
      );
      await send(
        { label: 'move the reading position without If-Match', expect: 200 },
        'PATCH',
        `/v1/conversations/${conversationId}`,
        {
          body: { readingPosition: null },
        },
      );
      const posted = await send(
        { label: 'post a message without If-Match or Idempotency-Key', expect: 202 },
        'POST',
        `/v1/conversations/${conversationId}/messages`,
        { body: { content: 'What did Marisol find in the lamp room?', selectedText: 'the lamp room' } },
      );
      turnId = posted.body?.turnId;
      expect(turnId).toBeTruthy();
      const ended = await waitFor(
        'the turn to end',
        async () => {
          const r = await fetch(`${stack.base}/v1/conversations/${conversationId}/events`, { headers: alice.auth });
          const items = ((await r.json()) as any).items as any[];
          return items.find((e) => ['AssistantReplied', 'TurnFailed', 'TurnCancelled'].includes(e.type));
        },
        30_000,
      );
      expect(ended.type).toBe('AssistantReplied');
      await waitFor('the messages read model to hold the answer', async () => {
        const r = await fetch(`${stack.base}/v1/conversations/${conversationId}/messages`, { headers: alice.auth });
        return ((await r.json()) as any).items?.some((m: any) => m.role === 'assistant');
      });
      await typed('list messages', 200, (c) =>
        c.GET('/v1/conversations/{id}/messages', { params: { path: { id: conversationId } } }),
      );
      const page = await typed('list messages, a page of one', 200, (c) =>
        c.GET('/v1/conversations/{id}/messages', { params: { path: { id: conversationId }, query: { limit: 1 } } }),
      );
      if (page.body?.nextCursor) {
        await typed('list messages, next page', 200, (c) =>
          c.GET('/v1/conversations/{id}/messages', {
            params: { path: { id: conversationId }, query: { limit: 1, cursor: page.body.nextCursor } },
          }),
        );
      }
      await typed('list events', 200, (c) =>
        c.GET('/v1/conversations/{id}/events', { params: { path: { id: conversationId } } }),
      );
      await typed('list events after 2, a page of 2', 200, (c) =>
        c.GET('/v1/conversations/{id}/events', {
          params: { path: { id: conversationId }, query: { after: 2, limit: 2 } },
        }),
      );
      await typed('cancel a finished turn', 202, (c) =>
        c.POST('/v1/conversations/{id}/turns/{turnId}/cancel', { params: { path: { id: conversationId, turnId } } }),
      );
      const forked = await typed('fork at version 2', 201, (c) =>
        c.POST('/v1/conversations/{id}/fork', { params: { path: { id: conversationId } }, body: { version: 2 } }),
      );
      expect(forked.body?.id).toBeTruthy();
      await typed('delete a conversation with If-Match', 204, (c) =>
        c.DELETE('/v1/conversations/{id}', {
          params: { path: { id: forked.body.id }, header: { 'If-Match': `"${forked.body.version}"` } },
        }),
      );
      await send(
        { label: 'delete a conversation without If-Match', expect: 204 },
        'DELETE',
        `/v1/conversations/${pendingConversation}`,
      );
    });

    it('the conversation stream (SSE) sends stored events as frames', async () => {
      // the stream stays open, so Prism's proxy cannot carry it: read its first frame directly
      const ac = new AbortController();
      const call = await direct(
        { label: 'follow a conversation (SSE)', expect: 200 },
        'GET',
        `/v1/conversations/${conversationId}/stream`,
        { headers: { ...alice.auth, accept: 'text/event-stream' }, signal: ac.signal },
        async (r) => {
          let text = '';
          if (!r.body) return text;
          const reader = r.body.getReader();
          while (!/event: ConversationStarted\n(?:id: 1\n)?data: /.test(text)) {
            const { value, done } = await reader.read();
            if (done) break;
            text += new TextDecoder().decode(value);
          }
          ac.abort();
          return text;
        },
      );
      expect(call.contentType).toMatch(/^text\/event-stream/);
      expect(call.text).toMatch(/event: ConversationStarted/);
    });

    it('Idempotency-Key: a retry gets the first answer, another body is 422; a stale If-Match is 409', async () => {
      const id = (
        await send({ label: 'start a conversation (carol)', expect: 201 }, 'POST', '/v1/conversations', {
          as: carol,
          body: {},
        })
      ).body?.id;
      const key = `k-${randomUUID()}`;
      const first = await typed('post with Idempotency-Key and If-Match', 202, (c) =>
        c.POST('/v1/conversations/{id}/messages', {
          params: { path: { id }, header: { 'Idempotency-Key': key, 'If-Match': '"1"' } },
          body: { content: 'Once' },
          headers: { authorization: `Bearer ${carol.token}` },
        }),
      );
      const retry = await send(
        { label: 'retry the same post', expect: 202 },
        'POST',
        `/v1/conversations/${id}/messages`,
        {
          as: carol,
          body: { content: 'Once' },
          headers: { 'idempotency-key': key },
        },
      );
      expect(retry.body).toEqual(first.body);
      await send(
        { label: 'reuse an Idempotency-Key with another body', expect: 422 },
        'POST',
        `/v1/conversations/${id}/messages`,
        {
          as: carol,
          body: { content: 'Twice' },
          headers: { 'idempotency-key': key },
        },
      );
      await send({ label: 'post with a stale If-Match', expect: 409 }, 'POST', `/v1/conversations/${id}/messages`, {
        as: carol,
        body: { content: 'Late' },
        headers: { 'if-match': '"1"' },
      });
      await send({ label: 'patch with a stale If-Match', expect: 409 }, 'PATCH', `/v1/conversations/${id}`, {
        as: carol,
        body: { title: 'Late' },
        headers: { 'if-match': '"1"' },
      });
      await send({ label: 'delete with a stale If-Match', expect: 409 }, 'DELETE', `/v1/conversations/${id}`, {
        as: carol,
        headers: { 'if-match': '"1"' },
      });
    });

    it('answers 429 with Retry-After past the post rate limit', async () => {
      const id = (
        await send({ label: 'start a conversation (eve)', expect: 201 }, 'POST', '/v1/conversations', {
          as: eve,
          body: {},
        })
      ).body?.id;
      for (let i = 0; i < RATE_LIMIT; i++) {
        await send({ label: 'post within the rate limit', expect: 202 }, 'POST', `/v1/conversations/${id}/messages`, {
          as: eve,
          body: { content: `message ${i}` },
        });
      }
      const limited = await send(
        { label: 'post past the rate limit', expect: 429 },
        'POST',
        `/v1/conversations/${id}/messages`,
        {
          as: eve,
          body: { content: 'one too many' },
        },
      );
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('answers 402 budget_exceeded with Retry-After to posts and batches of a reader whose budget is spent', async () => {
      // a token budget of 0 is spent before anything is posted
      const spent = clientFor(prism.base, `frank-${randomUUID()}`, { claims: { parley_budget_usd_per_month: 0 } });
      const id = (
        await send({ label: 'start a conversation (over budget)', expect: 201 }, 'POST', '/v1/conversations', {
          as: spent,
          body: {},
        })
      ).body?.id;
      const post = await send({ label: 'post over budget', expect: 402 }, 'POST', `/v1/conversations/${id}/messages`, {
        as: spent,
        body: { content: 'one more?' },
      });
      expect(post.body).toMatchObject({ code: 'budget_exceeded', budgetUsd: 0, spentUsd: 0 });
      expect(Number(post.headers['retry-after'])).toBeGreaterThan(0);
      await send({ label: 'batch over budget', expect: 402 }, 'POST', `/v1/conversations/${id}/batches`, {
        as: spent,
        body: { prompts: ['one', 'two'], mode: 'sequential' },
      });
      const usage = await send({ label: 'usage with a budget', expect: 200 }, 'GET', '/v1/usage', { as: spent });
      expect(usage.body.budget).toMatchObject({ limitUsd: 0, spentUsd: 0, leftUsd: 0 });
    });
  });

  describe('client mistakes', () => {
    let conversationId: string;

    beforeAll(async () => {
      const r = await fetch(`${stack.base}/v1/conversations`, {
        method: 'POST',
        headers: { ...alice.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ bookId, title: 'Mistakes' }),
      });
      conversationId = ((await r.json()) as any).id;
    });

    /** Every operation that needs a token, with real ids filled in. */
    const securedCalls = () =>
      operations
        .filter((o) => (o.op.security ?? doc.security ?? []).length > 0)
        .map((o) => ({
          key: o.key,
          method: o.method,
          url: o.template
            .replace('{turnId}', randomUUID())
            .replace('{batchId}', randomUUID())
            .replace('{id}', o.template.startsWith('/v1/books') ? bookId : conversationId),
          body:
            o.method === 'POST' || o.method === 'PATCH'
              ? o.template.endsWith('/fork')
                ? { version: 1 }
                : o.template === '/v1/books'
                  ? bookJson()
                  : o.template.endsWith('/messages')
                    ? { content: 'hi' }
                    : o.template.endsWith('/batches')
                      ? { prompts: ['hi'], mode: 'sequential' }
                      : { title: 'x' }
              : undefined,
          query: o.template.endsWith('/search') ? '?q=lamp' : '',
        }));

    it('401 without a token, with a forged token and with an expired one, on every secured operation', async () => {
      const forged = tokenFor(alice.userId, { secret: `not-${TEST_JWT_SECRET}` });
      const expired = tokenFor(alice.userId, { ttlSeconds: -60 });
      for (const c of securedCalls()) {
        await send(
          { label: `no token: ${c.key}`, expect: 401, kind: 'schema', where: 'security' },
          c.method,
          c.url + c.query,
          {
            as: null,
            body: c.body,
          },
        );
        await send({ label: `forged token: ${c.key}`, expect: 401, kind: 'opaque' }, c.method, c.url + c.query, {
          token: forged,
          body: c.body,
        });
        await send({ label: `expired token: ${c.key}`, expect: 401, kind: 'opaque' }, c.method, c.url + c.query, {
          token: expired,
          body: c.body,
        });
      }
    });

    it("404 for another user's conversation or book, and for unknown ids", async () => {
      for (const c of securedCalls().filter((c) => /\{id\}/.test(c.key))) {
        await send(
          { label: `another user's resource: ${c.key}`, expect: 404, kind: 'opaque' },
          c.method,
          c.url + c.query,
          {
            as: bob,
            body: c.body,
          },
        );
        const unknown = c.url.replace(c.url.startsWith('/v1/books') ? bookId : conversationId, randomUUID());
        await send({ label: `unknown id: ${c.key}`, expect: 404, kind: 'opaque' }, c.method, unknown + c.query, {
          body: c.body,
        });
      }
      await send(
        { label: 'a version the conversation does not have', expect: 404, kind: 'opaque' },
        'GET',
        `/v1/conversations/${conversationId}?version=99`,
      );
    });

    it('400 for ids that are not UUIDs', async () => {
      for (const c of securedCalls().filter((c) => /\{id\}/.test(c.key))) {
        const bad = c.url.replace(c.url.startsWith('/v1/books') ? bookId : conversationId, 'not-a-uuid');
        await send(
          { label: `non-UUID id: ${c.key}`, expect: 400, kind: 'schema', where: 'request.path' },
          c.method,
          bad + c.query,
          {
            body: c.body,
          },
        );
      }
      await send(
        { label: 'non-UUID turn id', expect: 400, kind: 'schema', where: 'request.path' },
        'POST',
        `/v1/conversations/${conversationId}/turns/not-a-uuid/cancel`,
      );
      await send(
        { label: 'non-UUID bookId filter', expect: 400, kind: 'schema', where: 'request.query' },
        'GET',
        '/v1/conversations?bookId=nope',
      );
    });

    it('400 for malformed JSON (sent directly: Prism cannot parse it)', async () => {
      for (const [label, url] of [
        ['malformed JSON: start a conversation', '/v1/conversations'],
        ['malformed JSON: post a message', `/v1/conversations/${conversationId}/messages`],
        ['malformed JSON: upload a book', '/v1/books'],
      ]) {
        await direct({ label, expect: 400, kind: 'schema' }, 'POST', url, {
          method: 'POST',
          headers: { ...alice.auth, 'content-type': 'application/json' },
          body: '{"title":',
        });
      }
    });

    it('400 for wrong types, unknown fields, missing and out-of-range fields', async () => {
      const bodies: Array<[string, string, string, unknown]> = [
        ['title of the wrong type', 'POST', '/v1/conversations', { title: 5 }],
        ['an unknown field', 'POST', '/v1/conversations', { title: 'x', colour: 'red' }],
        ['bookId not a UUID', 'POST', '/v1/conversations', { bookId: 'nope' }],
        ['title over 200 characters', 'POST', '/v1/conversations', { title: 'x'.repeat(201) }],
        ['readingPosition of the wrong type', 'POST', '/v1/conversations', { readingPosition: 'two' }],
        ['a body that is an array', 'POST', '/v1/conversations', []],
        ['content of the wrong type', 'POST', `/v1/conversations/${conversationId}/messages`, { content: 7 }],
        ['content missing', 'POST', `/v1/conversations/${conversationId}/messages`, { selectedText: 'x' }],
        ['content empty', 'POST', `/v1/conversations/${conversationId}/messages`, { content: '' }],
        [
          'an unknown field in a post',
          'POST',
          `/v1/conversations/${conversationId}/messages`,
          { content: 'x', extra: 1 },
        ],
        ['an unknown field in a patch', 'PATCH', `/v1/conversations/${conversationId}`, { title: 'x', extra: 1 }],
        ['title of the wrong type in a patch', 'PATCH', `/v1/conversations/${conversationId}`, { title: [] }],
        ['fork version missing', 'POST', `/v1/conversations/${conversationId}/fork`, {}],
        ['fork version 0', 'POST', `/v1/conversations/${conversationId}/fork`, { version: 0 }],
        ['fork version of the wrong type', 'POST', `/v1/conversations/${conversationId}/fork`, { version: 'one' }],
        ['book format unknown', 'POST', '/v1/books', { ...bookJson(), format: 'docx' }],
        ['book title of the wrong type', 'POST', '/v1/books', { ...bookJson(), title: 1 }],
        ['book with an unknown field', 'POST', '/v1/books', { ...bookJson(), pages: 3 }],
      ];
      for (const [label, method, url, body] of bodies) {
        await send({ label, expect: 400, kind: 'schema', where: 'request.body' }, method, url, { body });
      }
      const opaque: Array<[string, string, string, unknown]> = [
        ['content only blanks', 'POST', `/v1/conversations/${conversationId}/messages`, { content: '   ' }],
        ['a patch that changes nothing', 'PATCH', `/v1/conversations/${conversationId}`, {}],
        ['fork past the last version', 'POST', `/v1/conversations/${conversationId}/fork`, { version: 99 }],
        ['book JSON without content', 'POST', '/v1/books', { title: 'x', format: 'text' }],
      ];
      for (const [label, method, url, body] of opaque) {
        await send({ label, expect: 400, kind: 'opaque' }, method, url, { body });
      }
      await send({ label: 'a body over 1 MB', expect: 413, kind: 'opaque' }, 'POST', '/v1/conversations', {
        body: { title: 'x'.repeat(1_100_000) },
      });
      const form = new FormData();
      form.append('file', new Blob(['some words'], { type: 'application/octet-stream' }), 'book.xyz');
      await send({ label: 'a book file of unknown format', expect: 415, kind: 'opaque' }, 'POST', '/v1/books', {
        body: form,
      });
    });

    it('400 for bad query values', async () => {
      const schema: Array<[string, string]> = [
        ['limit=0', '/v1/conversations?limit=0'],
        ['limit=abc', '/v1/conversations?limit=abc'],
        ['limit=101', '/v1/conversations?limit=101'],
        ['messages limit=0', `/v1/conversations/${conversationId}/messages?limit=0`],
        ['events limit=abc', `/v1/conversations/${conversationId}/events?limit=abc`],
        ['events after=-1', `/v1/conversations/${conversationId}/events?after=-1`],
        ['version=-1', `/v1/conversations/${conversationId}?version=-1`],
        ['version=abc', `/v1/conversations/${conversationId}?version=abc`],
        ['multitask=sometimes', `/v1/conversations/${conversationId}/messages?multitask=sometimes`],
        ['search without q', `/v1/books/${bookId}/search`],
        ['search k=0', `/v1/books/${bookId}/search?q=lamp&k=0`],
        ['search k=abc', `/v1/books/${bookId}/search?q=lamp&k=abc`],
      ];
      for (const [label, url] of schema) {
        const post = url.includes('multitask');
        await send({ label, expect: 400, kind: 'schema', where: 'request.query' }, post ? 'POST' : 'GET', url, {
          body: post ? { content: 'x' } : undefined,
        });
      }
      await send({ label: 'cursor=garbage', expect: 400, kind: 'opaque' }, 'GET', '/v1/conversations?cursor=garbage');
      await send(
        { label: 'messages cursor=garbage', expect: 400, kind: 'opaque' },
        'GET',
        `/v1/conversations/${conversationId}/messages?cursor=garbage`,
      );
    });

    it('400 for malformed If-Match, Idempotency-Key and Last-Event-ID headers', async () => {
      await send(
        { label: 'malformed If-Match on a patch', expect: 400, kind: 'opaque' },
        'PATCH',
        `/v1/conversations/${conversationId}`,
        {
          body: { title: 'x' },
          headers: { 'if-match': 'abc' },
        },
      );
      await send(
        { label: 'malformed If-Match on a delete', expect: 400, kind: 'opaque' },
        'DELETE',
        `/v1/conversations/${conversationId}`,
        {
          headers: { 'if-match': 'version one' },
        },
      );
      await send(
        { label: 'malformed If-Match on a post', expect: 400, kind: 'opaque' },
        'POST',
        `/v1/conversations/${conversationId}/messages`,
        { body: { content: 'x' }, headers: { 'if-match': '"-1"' } },
      );
      await send(
        { label: 'Idempotency-Key over 200 characters', expect: 400, kind: 'opaque' },
        'POST',
        `/v1/conversations/${conversationId}/messages`,
        { body: { content: 'x' }, headers: { 'idempotency-key': 'k'.repeat(201) } },
      );
      await send(
        { label: 'a bad Last-Event-ID on the stream', expect: 400, kind: 'opaque' },
        'GET',
        `/v1/conversations/${conversationId}/stream`,
        { headers: { 'last-event-id': 'yesterday', accept: 'text/event-stream' } },
      );
      await send(
        { label: 'the stream with ?access_token= of another user', expect: 404, kind: 'opaque' },
        'GET',
        `/v1/conversations/${conversationId}/stream?access_token=${bob.token}`,
        { as: null, headers: { accept: 'text/event-stream' } },
      );
    });
  });

  describe('the book lifecycle end', () => {
    it('deletes a book', async () => {
      await typed('delete a book', 204, (c) => c.DELETE('/v1/books/{id}', { params: { path: { id: spareBookId } } }));
      await send({ label: 'show a deleted book', expect: 404, kind: 'opaque' }, 'GET', `/v1/books/${spareBookId}`);
    });
  });

  describe('the verdict', () => {
    beforeAll(async () => {
      const checked = await prism.validateResponses(directExchanges);
      directExchanges.forEach((x, i) => x.call.violations.push(...checked[i]));
    }, 30_000);

    /** One line per operation, status and departure, with the calls that showed it. */
    const table = (rows: Departure[]) => {
      const groups = new Map<string, { op: string; status: number; what: string; labels: string[] }>();
      for (const { call, what } of rows) {
        const op = call.operation ?? `${call.method} ${call.url} (no operation)`;
        const key = `${op} ${call.status} ${what}`;
        const group = groups.get(key) ?? { op, status: call.status, what, labels: [] };
        if (!group.labels.includes(call.label)) group.labels.push(call.label);
        groups.set(key, group);
      }
      return [...groups.values()]
        .sort((a, b) => a.op.localeCompare(b.op) || a.status - b.status)
        .map(
          (g) =>
            `  ${g.op.padEnd(50)} ${String(g.status).padEnd(4)} ${g.what}\n` +
            `  ${''.padEnd(50)}      seen in: ${g.labels.slice(0, 3).join('; ')}${g.labels.length > 3 ? `; and ${g.labels.length - 3} more` : ''}`,
        )
        .join('\n');
    };
    const fail = (title: string, rows: Departure[]) => {
      if (rows.length === 0) return;
      throw new Error(`${title} (${rows.length} in ${calls.length} calls):\n${table(rows)}`);
    };

    const refuses = (v: Violation, where: string) =>
      where === 'security'
        ? v.location[0] === 'request' && String(v.code) === '401'
        : v.location.join('.').toLowerCase().startsWith(where.toLowerCase());

    it('the served document is the checked-in docs/openapi.json', () => {
      const checkedIn = JSON.parse(readFileSync(path.join(ROOT, 'docs/openapi.json'), 'utf8'));
      expect(doc).toEqual(checkedIn);
    });

    it('every operation of the document was called', () => {
      const called = new Set(calls.map((c) => c.operation).filter(Boolean));
      expect(operations.map((o) => o.key).filter((k) => !called.has(k))).toEqual([]);
      expect(calls.filter((c) => !c.operation).map((c) => `${c.method} ${c.url}`)).toEqual([]);
    });

    it('Prism finds no departure of any answer from the document', () => {
      fail(
        'answers that depart from the document',
        calls.flatMap((c) =>
          c.violations
            .filter((v) => v.location[0] !== 'request')
            .map((v) => ({ call: c, what: `${v.location.join('.')}: ${v.message}` })),
        ),
      );
    });

    it('the document accepts every well-formed request', () => {
      fail(
        'well-formed requests the document refuses',
        calls
          .filter((c) => c.kind === 'valid')
          .flatMap((c) =>
            c.violations
              .filter((v) => v.location[0] === 'request')
              .map((v) => ({ call: c, what: `${v.location.join('.')}: ${v.message}` })),
          ),
      );
    });

    it('the document refuses the mistakes a schema can describe, as the API does', () => {
      fail(
        'mistakes the API refuses but the document accepts',
        calls
          .filter((c) => c.kind === 'schema' && c.via === 'prism')
          .filter((c) => !c.violations.some((v) => refuses(v, c.where ?? 'request')))
          .map((c) => ({ call: c, what: `no violation at ${c.where ?? 'request'} from Prism` })),
      );
    });

    it('answers no 5xx, and each call the status it should', () => {
      fail(
        'unexpected statuses',
        calls
          .filter((c) => c.status >= 500 || !c.expect.includes(c.status))
          .map((c) => ({
            call: c,
            what: `expected ${c.expect.join(' or ')}: ${c.text.slice(0, 120)}`,
          })),
      );
    });

    it('describes a body for every answer that has one', () => {
      const undescribed = calls.flatMap((c) => {
        const o = operations.find((x) => x.key === c.operation);
        const responses = o?.op.responses ?? {};
        const response = responses[String(c.status)] ?? responses[`${String(c.status)[0]}XX`] ?? responses.default;
        if (!response || response.content || c.text.length === 0) return [];
        return [{ call: c, what: `a ${c.contentType.split(';')[0]} body, but the document describes none` }];
      });
      fail('answers whose body the document does not describe', undescribed);
    });

    it('answers every error as an RFC 9457 problem with a code', () => {
      const problems = calls
        .filter((c) => c.status >= 400)
        .flatMap((c) => {
          const wrong: string[] = [];
          if (!/^application\/problem\+json\b/.test(c.contentType))
            wrong.push(`content-type ${c.contentType || 'none'}`);
          if (typeof c.body?.code !== 'string') wrong.push('no string code');
          if (c.body?.status !== c.status) wrong.push(`status ${JSON.stringify(c.body?.status)}`);
          return wrong.length ? [{ call: c, what: wrong.join('; ') }] : [];
        });
      fail('errors that are not problem details', problems);
    });

    afterAll(() => {
      if (process.env.CONTRACT_REPORT) {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        require('node:fs').writeFileSync(process.env.CONTRACT_REPORT, JSON.stringify(calls, null, 2));
      }
    });
  });
});
