import { randomUUID } from 'node:crypto';
import { waitForBook } from '../../support/factories/books';
import { ContractHarness, RATE_LIMIT } from '../../support/contract-harness';
import { frameDepartures } from '../../support/sse-frames';
import { clientFor } from '../../support/stack';
import { waitFor } from '../../support/wait-for';

/** Every operation called well-formed, by readers within their limits (and past them). */
export function describeHappyPath(h: ContractHarness): void {
  describe('the happy path', () => {
    let conversationId: string;
    let turnId: string;

    beforeAll(async () => {
      await h.stack.startWorker();
      const own = clientFor(h.stack.base, h.alice.userId);
      await waitForBook(own, h.bookId);
      await waitForBook(own, h.spareBookId);
    }, 60_000);

    it('health and readiness', async () => {
      await h.typed('liveness', 200, (c) => c.GET('/healthz'));
      await h.typed('readiness', 200, (c) => c.GET('/readyz'));
      await h.typed('the running release', 200, (c) => c.GET('/version'));
      await h.typed('where tokens come from (RFC 9728)', 200, (c) => c.GET('/.well-known/oauth-protected-resource'));
    });

    it('the development token endpoint is off outside development', async () => {
      await h.typed('dev token in production', 404, (c) => c.POST('/v1/dev/token', { body: { userId: 'alice' } }));
    });

    it('the problem catalogue, where problem types lead', async () => {
      await h.typed('list problem kinds', 200, (c) => c.GET('/problems'));
      await h.typed('show a problem kind', 200, (c) =>
        c.GET('/problems/{code}', { params: { path: { code: 'version_conflict' } } }),
      );
      await h.send(
        { label: 'an unknown problem kind', expect: 404, kind: 'schema', where: 'request.path' },
        'GET',
        '/problems/no_such_code',
        { as: null },
      );
    });

    it('books: list, show, search, follow the ingestion (SSE)', async () => {
      await h.typed('list books', 200, (c) => c.GET('/v1/books'));
      const shown = await h.typed('show a book', 200, (c) =>
        c.GET('/v1/books/{id}', { params: { path: { id: h.bookId } } }),
      );
      expect(shown.body?.status).toBe('ready');
      const found = await h.typed('search a book', 200, (c) =>
        c.GET('/v1/books/{id}/search', { params: { path: { id: h.bookId }, query: { q: 'lamp', k: 3 } } }),
      );
      expect(found.body?.items?.length).toBeGreaterThan(0);
      // a ready book's event stream sends `ready` and ends at once, so it passes through the proxy
      const sse = await h.send(
        { label: 'follow a ready book (SSE)', expect: 200 },
        'GET',
        `/v1/books/${h.bookId}/events`,
        {
          headers: { accept: 'text/event-stream' },
        },
      );
      expect(sse.contentType).toMatch(/^text\/event-stream/);
      expect(sse.text).toMatch(/event: ready\ndata: \{/);
      expect(frameDepartures(h.doc, 'BookStreamFrame', sse.text)).toEqual([]);
    });

    it('conversations: create, list, show, show ?version, patch, post, messages, events, fork, delete', async () => {
      const created = await h.typed('start a conversation about a book', 201, (c) =>
        c.POST('/v1/conversations', { body: { bookId: h.bookId, title: 'Lamps', readingPosition: 2 } as any }),
      );
      conversationId = created.body?.id;
      expect(conversationId).toBeTruthy();
      await h.typed('list conversations', 200, (c) => c.GET('/v1/conversations', { params: { query: { limit: 10 } } }));
      await h.typed('list conversations about a book', 200, (c) =>
        c.GET('/v1/conversations', { params: { query: { bookId: h.bookId } } }),
      );
      await h.typed('show a conversation', 200, (c) =>
        c.GET('/v1/conversations/{id}', { params: { path: { id: conversationId } } }),
      );
      await h.typed('show a past version', 200, (c) =>
        c.GET('/v1/conversations/{id}', { params: { path: { id: conversationId }, query: { version: 1 } } }),
      );
      await h.typed('rename with If-Match', 200, (c) =>
        c.PATCH('/v1/conversations/{id}', {
          params: { path: { id: conversationId }, header: { 'If-Match': '"1"' } },
          body: { title: 'Lamps and storms' },
        }),
      );
      await h.send(
        { label: 'move the reading position without If-Match', expect: 200 },
        'PATCH',
        `/v1/conversations/${conversationId}`,
        {
          body: { readingPosition: null },
        },
      );
      const posted = await h.send(
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
          const r = await fetch(`${h.stack.base}/v1/conversations/${conversationId}/events`, { headers: h.alice.auth });
          const items = ((await r.json()) as any).items as any[];
          return items.find((e) => ['AssistantReplied', 'TurnFailed', 'TurnCancelled'].includes(e.type));
        },
        30_000,
      );
      expect(ended.type).toBe('AssistantReplied');
      await waitFor('the messages read model to hold the answer', async () => {
        const r = await fetch(`${h.stack.base}/v1/conversations/${conversationId}/messages`, { headers: h.alice.auth });
        return ((await r.json()) as any).items?.some((m: any) => m.role === 'assistant');
      });
      await h.typed('list messages', 200, (c) =>
        c.GET('/v1/conversations/{id}/messages', { params: { path: { id: conversationId } } }),
      );
      const page = await h.typed('list messages, a page of one', 200, (c) =>
        c.GET('/v1/conversations/{id}/messages', { params: { path: { id: conversationId }, query: { limit: 1 } } }),
      );
      if (page.body?.nextCursor) {
        await h.typed('list messages, next page', 200, (c) =>
          c.GET('/v1/conversations/{id}/messages', {
            params: { path: { id: conversationId }, query: { limit: 1, cursor: page.body.nextCursor } },
          }),
        );
      }
      await h.typed('list events', 200, (c) =>
        c.GET('/v1/conversations/{id}/events', { params: { path: { id: conversationId } } }),
      );
      await h.typed('list events after 2, a page of 2', 200, (c) =>
        c.GET('/v1/conversations/{id}/events', {
          params: { path: { id: conversationId }, query: { after: 2, limit: 2 } },
        }),
      );
      await h.typed('cancel a finished turn', 202, (c) =>
        c.POST('/v1/conversations/{id}/turns/{turnId}/cancel', { params: { path: { id: conversationId, turnId } } }),
      );
      // (a tool that needs approval is an operator's MCP tool: the approvals e2e answers one that waits)
      await h.typed('answer an approval the turn never asked', 404, (c) =>
        c.POST('/v1/conversations/{id}/turns/{turnId}/approvals', {
          params: { path: { id: conversationId, turnId } },
          body: { toolCallId: 'toolu_never_asked', approved: true },
        }),
      );
      const forked = await h.typed('fork at version 2', 201, (c) =>
        c.POST('/v1/conversations/{id}/fork', { params: { path: { id: conversationId } }, body: { version: 2 } }),
      );
      expect(forked.body?.id).toBeTruthy();
      await h.typed('delete a conversation with If-Match', 204, (c) =>
        c.DELETE('/v1/conversations/{id}', {
          params: { path: { id: forked.body.id }, header: { 'If-Match': `"${forked.body.version}"` } },
        }),
      );
      await h.send(
        { label: 'delete a conversation without If-Match', expect: 204 },
        'DELETE',
        `/v1/conversations/${h.pendingConversation}`,
      );
    });

    it('the conversation stream (SSE) sends stored events as frames', async () => {
      // the stream stays open, so Prism's proxy cannot carry it: read its first frame directly
      const ac = new AbortController();
      const call = await h.direct(
        { label: 'follow a conversation (SSE)', expect: 200 },
        'GET',
        `/v1/conversations/${conversationId}/stream`,
        { headers: { ...h.alice.auth, accept: 'text/event-stream' }, signal: ac.signal },
        async (r) => {
          let text = '';
          if (!r.body) return text;
          const reader = r.body.getReader();
          while (!/event: ConversationStarted\n(?:id: 1\n)?data: [^\n]*\n\n/.test(text)) {
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
      expect(
        frameDepartures(h.doc, 'ConversationStreamFrame', call.text.slice(0, call.text.lastIndexOf('\n\n'))),
      ).toEqual([]);
    });

    it('the chat protocols: an AI SDK chat turn, its resume (204 once it ended), an AG-UI run', async () => {
      // a reader of their own, so these posts count against no one else's rate limit
      const dana = clientFor(h.stack.base, `reader-${randomUUID()}`);
      const id = (
        await h.send({ label: 'start a conversation (dana)', expect: 201 }, 'POST', '/v1/conversations', {
          as: dana,
          body: {},
        })
      ).body?.id;
      const chat = await h.send({ label: 'an AI SDK chat turn (SSE)', expect: 200 }, 'POST', '/v1/ai-sdk/chat', {
        as: dana,
        body: { id, messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Hello?' }] }] },
      });
      expect(chat.contentType).toMatch(/^text\/event-stream/);
      await h.send(
        { label: 'resume an AI SDK chat with no turn in flight', expect: 204 },
        'GET',
        `/v1/ai-sdk/chat/${id}/stream`,
        {
          as: dana,
        },
      );
      const run = await h.send({ label: 'an AG-UI run (SSE)', expect: 200 }, 'POST', '/v1/ag-ui', {
        as: dana,
        headers: { accept: 'text/event-stream' },
        body: {
          threadId: id,
          runId: randomUUID(),
          messages: [{ id: 'm2', role: 'user', content: 'And then?' }],
          tools: [],
          context: [],
        },
      });
      expect(run.contentType).toMatch(/^text\/event-stream/);
    });

    it('Idempotency-Key: a retry gets the first answer, another body is 422; a stale If-Match is 409', async () => {
      const id = (
        await h.send({ label: 'start a conversation (carol)', expect: 201 }, 'POST', '/v1/conversations', {
          as: h.carol,
          body: {},
        })
      ).body?.id;
      const key = `k-${randomUUID()}`;
      const first = await h.typed('post with Idempotency-Key and If-Match', 202, (c) =>
        c.POST('/v1/conversations/{id}/messages', {
          params: { path: { id }, header: { 'Idempotency-Key': key, 'If-Match': '"1"' } },
          body: { content: 'Once' },
          headers: { authorization: `Bearer ${h.carol.token}` },
        }),
      );
      const retry = await h.send(
        { label: 'retry the same post', expect: 202 },
        'POST',
        `/v1/conversations/${id}/messages`,
        {
          as: h.carol,
          body: { content: 'Once' },
          headers: { 'idempotency-key': key },
        },
      );
      expect(retry.body).toEqual(first.body);
      await h.send(
        { label: 'reuse an Idempotency-Key with another body', expect: 422 },
        'POST',
        `/v1/conversations/${id}/messages`,
        {
          as: h.carol,
          body: { content: 'Twice' },
          headers: { 'idempotency-key': key },
        },
      );
      await h.send({ label: 'post with a stale If-Match', expect: 409 }, 'POST', `/v1/conversations/${id}/messages`, {
        as: h.carol,
        body: { content: 'Late' },
        headers: { 'if-match': '"1"' },
      });
      await h.send({ label: 'patch with a stale If-Match', expect: 409 }, 'PATCH', `/v1/conversations/${id}`, {
        as: h.carol,
        body: { title: 'Late' },
        headers: { 'if-match': '"1"' },
      });
      await h.send({ label: 'delete with a stale If-Match', expect: 409 }, 'DELETE', `/v1/conversations/${id}`, {
        as: h.carol,
        headers: { 'if-match': '"1"' },
      });
    });

    it('answers 429 with Retry-After past the post rate limit', async () => {
      const id = (
        await h.send({ label: 'start a conversation (eve)', expect: 201 }, 'POST', '/v1/conversations', {
          as: h.eve,
          body: {},
        })
      ).body?.id;
      for (let i = 0; i < RATE_LIMIT; i++) {
        await h.send({ label: 'post within the rate limit', expect: 202 }, 'POST', `/v1/conversations/${id}/messages`, {
          as: h.eve,
          body: { content: `message ${i}` },
        });
      }
      const limited = await h.send(
        { label: 'post past the rate limit', expect: 429 },
        'POST',
        `/v1/conversations/${id}/messages`,
        {
          as: h.eve,
          body: { content: 'one too many' },
        },
      );
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('answers 402 budget_exceeded with Retry-After to posts and batches of a reader whose budget is spent', async () => {
      // a token budget of 0 is spent before anything is posted
      const spent = clientFor(h.prism.base, `frank-${randomUUID()}`, { claims: { parley_budget_usd_per_month: 0 } });
      const id = (
        await h.send({ label: 'start a conversation (over budget)', expect: 201 }, 'POST', '/v1/conversations', {
          as: spent,
          body: {},
        })
      ).body?.id;
      const post = await h.send(
        { label: 'post over budget', expect: 402 },
        'POST',
        `/v1/conversations/${id}/messages`,
        {
          as: spent,
          body: { content: 'one more?' },
        },
      );
      expect(post.body).toMatchObject({ code: 'budget_exceeded', budgetUsd: 0, spentUsd: 0 });
      expect(Number(post.headers['retry-after'])).toBeGreaterThan(0);
      await h.send({ label: 'batch over budget', expect: 402 }, 'POST', `/v1/conversations/${id}/batches`, {
        as: spent,
        body: { prompts: ['one', 'two'], mode: 'sequential' },
      });
      const usage = await h.send({ label: 'usage with a budget', expect: 200 }, 'GET', '/v1/usage', { as: spent });
      expect(usage.body.budget).toMatchObject({ limitUsd: 0, spentUsd: 0, leftUsd: 0 });
    });
  });
}

/** The spare book goes last: the scenarios before it use it. */
export function describeBookLifecycleEnd(h: ContractHarness): void {
  describe('the book lifecycle end', () => {
    it('deletes a book', async () => {
      await h.typed('delete a book', 204, (c) =>
        c.DELETE('/v1/books/{id}', { params: { path: { id: h.spareBookId } } }),
      );
      await h.send({ label: 'show a deleted book', expect: 404, kind: 'opaque' }, 'GET', `/v1/books/${h.spareBookId}`);
    });
  });
}
