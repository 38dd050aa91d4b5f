import { randomUUID } from 'node:crypto';
import { bookJson, ContractHarness } from '../../support/contract-harness';
import { TEST_JWT_SECRET, tokenFor } from '../../support/stack';

/** The mistakes clients make: tokens, other users' ids, malformed ids, bodies, queries and headers. */
export function describeClientMistakes(h: ContractHarness): void {
  describe('client mistakes', () => {
    let conversationId: string;

    beforeAll(async () => {
      const r = await fetch(`${h.stack.base}/v1/conversations`, {
        method: 'POST',
        headers: { ...h.alice.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ bookId: h.bookId, title: 'Mistakes' }),
      });
      conversationId = ((await r.json()) as any).id;
    });

    /** Every operation that needs a token, with real ids filled in. */
    const securedCalls = () =>
      h.operations
        .filter((o) => (o.op.security ?? h.doc.security ?? []).length > 0)
        .map((o) => ({
          key: o.key,
          method: o.method,
          url: o.template
            .replace('{turnId}', randomUUID())
            .replace('{batchId}', randomUUID())
            .replace('{id}', o.template.startsWith('/v1/books') ? h.bookId : conversationId),
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
                      : o.template.endsWith('/approvals')
                        ? { toolCallId: 'toolu_x', approved: true }
                        : { title: 'x' }
              : undefined,
          query: o.template.endsWith('/search') ? '?q=lamp' : '',
        }));

    it('401 without a token, with a forged token and with an expired one, on every secured operation', async () => {
      const forged = tokenFor(h.alice.userId, { secret: `not-${TEST_JWT_SECRET}` });
      const expired = tokenFor(h.alice.userId, { ttlSeconds: -60 });
      for (const c of securedCalls()) {
        await h.send(
          { label: `no token: ${c.key}`, expect: 401, kind: 'schema', where: 'security' },
          c.method,
          c.url + c.query,
          {
            as: null,
            body: c.body,
          },
        );
        await h.send({ label: `forged token: ${c.key}`, expect: 401, kind: 'opaque' }, c.method, c.url + c.query, {
          token: forged,
          body: c.body,
        });
        await h.send({ label: `expired token: ${c.key}`, expect: 401, kind: 'opaque' }, c.method, c.url + c.query, {
          token: expired,
          body: c.body,
        });
      }
    });

    it("404 for another user's conversation or book, and for unknown ids", async () => {
      for (const c of securedCalls().filter((c) => /\{id\}/.test(c.key))) {
        await h.send(
          { label: `another user's resource: ${c.key}`, expect: 404, kind: 'opaque' },
          c.method,
          c.url + c.query,
          {
            as: h.bob,
            body: c.body,
          },
        );
        const unknown = c.url.replace(c.url.startsWith('/v1/books') ? h.bookId : conversationId, randomUUID());
        await h.send({ label: `unknown id: ${c.key}`, expect: 404, kind: 'opaque' }, c.method, unknown + c.query, {
          body: c.body,
        });
      }
      const unknownBook = await h.send(
        { label: 'a patch naming an unknown book', expect: 404, kind: 'opaque' },
        'PATCH',
        `/v1/conversations/${conversationId}`,
        { body: { bookIds: [randomUUID()] } },
      );
      expect(unknownBook.body.code).toBe('book_not_found');
      await h.send(
        { label: 'a version the conversation does not have', expect: 404, kind: 'opaque' },
        'GET',
        `/v1/conversations/${conversationId}?version=99`,
      );
    });

    it('405 with Allow for a method a path does not answer, 404 for a path nobody serves', async () => {
      const templates = [...new Set(h.operations.map((o) => o.template))].filter((t) => t.startsWith('/v1/'));
      for (const template of templates) {
        const declared = h.operations.filter((o) => o.template === template).map((o) => o.method);
        const method = ['PUT', 'PATCH', 'DELETE', 'POST'].find((m) => !declared.includes(m))!;
        const url = template.replace(/\{[a-zA-Z]+\}/g, randomUUID());
        const r = await fetch(`${h.stack.base}${url}`, { method, headers: h.alice.auth });
        const body = (await r.json()) as { code: string };
        const allow = (r.headers.get('allow') ?? '').split(', ');
        expect({ template, method, status: r.status, code: body.code }).toEqual({
          template,
          method,
          status: 405,
          code: 'method_not_allowed',
        });
        expect(allow).toEqual(expect.arrayContaining(declared));
        expect(allow).not.toContain(method);
      }
      const r = await fetch(`${h.stack.base}/v1/no-such-thing`, { method: 'PUT', headers: h.alice.auth });
      expect({ status: r.status, allow: r.headers.get('allow') }).toEqual({ status: 404, allow: null });
    });

    it('400 for ids that are not UUIDs', async () => {
      for (const c of securedCalls().filter((c) => /\{id\}/.test(c.key))) {
        const bad = c.url.replace(c.url.startsWith('/v1/books') ? h.bookId : conversationId, 'not-a-uuid');
        await h.send(
          { label: `non-UUID id: ${c.key}`, expect: 400, kind: 'schema', where: 'request.path' },
          c.method,
          bad + c.query,
          {
            body: c.body,
          },
        );
      }
      await h.send(
        { label: 'non-UUID turn id', expect: 400, kind: 'schema', where: 'request.path' },
        'POST',
        `/v1/conversations/${conversationId}/turns/not-a-uuid/cancel`,
      );
      await h.send(
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
        await h.direct({ label, expect: 400, kind: 'schema' }, 'POST', url, {
          method: 'POST',
          headers: { ...h.alice.auth, 'content-type': 'application/json' },
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
        ['content only blanks', 'POST', `/v1/conversations/${conversationId}/messages`, { content: '   ' }],
        [
          'a blank prompt',
          'POST',
          `/v1/conversations/${conversationId}/batches`,
          { prompts: [' '], mode: 'sequential' },
        ],
        ['bookIds null', 'POST', '/v1/conversations', { bookIds: null }],
        ['bookIds repeated', 'POST', '/v1/conversations', { bookIds: [h.bookId, h.bookId] }],
        ['an unknown policy field', 'PATCH', `/v1/conversations/${conversationId}`, { policy: { colour: 'red' } }],
        ['fork version past 2^31-1', 'POST', `/v1/conversations/${conversationId}/fork`, { version: 2 ** 31 }],
        ['fork version not an integer', 'POST', `/v1/conversations/${conversationId}/fork`, { version: 1.5 }],
        ['webhook events empty', 'POST', '/v1/webhooks', { url: 'https://example.com/hook', events: [] }],
        [
          'webhook events repeated',
          'POST',
          '/v1/webhooks',
          { url: 'https://example.com/hook', events: ['turn.ended', 'turn.ended'] },
        ],
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
        ['book format unknown', 'POST', '/v1/books', { ...bookJson(), format: 'mobi' }],
        ['book title of the wrong type', 'POST', '/v1/books', { ...bookJson(), title: 1 }],
        ['book with an unknown field', 'POST', '/v1/books', { ...bookJson(), pages: 3 }],
      ];
      for (const [label, method, url, body] of bodies) {
        await h.send({ label, expect: 400, kind: 'schema', where: 'request.body' }, method, url, { body });
      }
      const opaque: Array<[string, string, string, unknown]> = [
        ['a patch that changes nothing', 'PATCH', `/v1/conversations/${conversationId}`, {}],
        ['fork past the last version', 'POST', `/v1/conversations/${conversationId}/fork`, { version: 99 }],
        ['book JSON without content', 'POST', '/v1/books', { title: 'x', format: 'text' }],
      ];
      for (const [label, method, url, body] of opaque) {
        await h.send({ label, expect: 400, kind: 'opaque' }, method, url, { body });
      }
      await h.send({ label: 'a body over 1 MB', expect: 413, kind: 'opaque' }, 'POST', '/v1/conversations', {
        body: { title: 'x'.repeat(1_100_000) },
      });
      const form = new FormData();
      form.append('file', new Blob(['some words'], { type: 'application/octet-stream' }), 'book.xyz');
      await h.send({ label: 'a book file of unknown format', expect: 415, kind: 'opaque' }, 'POST', '/v1/books', {
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
        ['search without q', `/v1/books/${h.bookId}/search`],
        ['search k=0', `/v1/books/${h.bookId}/search?q=lamp&k=0`],
        ['search k=abc', `/v1/books/${h.bookId}/search?q=lamp&k=abc`],
        ['limit=1.5', '/v1/conversations?limit=1.5'],
        ['events after=2^31', `/v1/conversations/${conversationId}/events?after=2147483648`],
        ['search k=2.5', `/v1/books/${h.bookId}/search?q=lamp&k=2.5`],
      ];
      for (const [label, url] of schema) {
        const post = url.includes('multitask');
        await h.send({ label, expect: 400, kind: 'schema', where: 'request.query' }, post ? 'POST' : 'GET', url, {
          body: post ? { content: 'x' } : undefined,
        });
      }
      await h.send({ label: 'cursor=garbage', expect: 400, kind: 'opaque' }, 'GET', '/v1/conversations?cursor=garbage');
      await h.send(
        { label: 'messages cursor=garbage', expect: 400, kind: 'opaque' },
        'GET',
        `/v1/conversations/${conversationId}/messages?cursor=garbage`,
      );
    });

    it('400 for malformed If-Match, Idempotency-Key and Last-Event-ID headers, which the document refuses too', async () => {
      await h.send(
        { label: 'malformed If-Match on a patch', expect: 400, kind: 'schema', where: 'request.header' },
        'PATCH',
        `/v1/conversations/${conversationId}`,
        {
          body: { title: 'x' },
          headers: { 'if-match': 'abc' },
        },
      );
      await h.send(
        { label: 'malformed If-Match on a delete', expect: 400, kind: 'schema', where: 'request.header' },
        'DELETE',
        `/v1/conversations/${conversationId}`,
        {
          headers: { 'if-match': 'version one' },
        },
      );
      await h.send(
        { label: 'malformed If-Match on a post', expect: 400, kind: 'schema', where: 'request.header' },
        'POST',
        `/v1/conversations/${conversationId}/messages`,
        { body: { content: 'x' }, headers: { 'if-match': '"-1"' } },
      );
      await h.send(
        { label: 'Idempotency-Key over 200 characters', expect: 400, kind: 'schema', where: 'request.header' },
        'POST',
        `/v1/conversations/${conversationId}/messages`,
        { body: { content: 'x' }, headers: { 'idempotency-key': 'k'.repeat(201) } },
      );
      await h.send(
        { label: 'a bad Last-Event-ID on the stream', expect: 400, kind: 'schema', where: 'request.header' },
        'GET',
        `/v1/conversations/${conversationId}/stream`,
        { headers: { 'last-event-id': 'yesterday', accept: 'text/event-stream' } },
      );
      await h.send(
        { label: 'the stream with ?access_token= of another user', expect: 404, kind: 'opaque' },
        'GET',
        `/v1/conversations/${conversationId}/stream?access_token=${h.bob.token}`,
        { as: null, headers: { accept: 'text/event-stream' } },
      );
    });
  });
}
