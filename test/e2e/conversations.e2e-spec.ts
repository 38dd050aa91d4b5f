import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import type { Schemas } from '../../libs/api-client/src';
import { ApiResult, expectEvent, expectOk, expectProblem, isEvent, turnOf } from '../support/api';
import { newBook } from '../support/factories/books';
import { conversationRenamed } from '../support/factories/events';
import { EventStore } from '@parley/event-store';
import { conversationStreamId } from '@parley/conversation';
import { clientFor, Client, startStack, Stack, tokenFor } from '../support/stack';
import { openStream } from '../support/sse-client';
import { waitFor } from '../support/wait-for';

const execFileAsync = promisify(execFile);

/** Conversations over HTTP, with two API replicas and a worker (projections) as separate processes. */
describe('conversations API (e2e)', () => {
  let stack: Stack;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    // no agent answers in this file: the turns stay pending, which is what posting tests want
    stack = await startStack({ apis: 2, workers: 1, env: { AGENT_ENABLED: 'false', SSE_SLOW_CLIENT_MS: '1000' } });
    alice = clientFor(stack.base, `alice-${randomUUID()}`);
    bob = clientFor(stack.base, `bob-${randomUUID()}`);
  }, 60_000);
  afterAll(() => stack?.stop());

  const newConversation = async (c: Client = alice, body: Schemas['CreateConversationDto'] = {}) =>
    expectOk(await c.api.POST('/v1/conversations', { body }), 201);
  const eventsOf = async (id: string, c: Client = alice) =>
    expectOk(await c.api.GET('/v1/conversations/{id}/events', { params: { path: { id } } })).items;
  const postMessage = (
    id: string,
    body: Schemas['PostMessageDto'],
    opts: {
      c?: Client;
      multitask?: 'enqueue' | 'reject' | 'interrupt';
      idempotencyKey?: string;
      ifMatch?: string;
    } = {},
  ) =>
    (opts.c ?? alice).api.POST('/v1/conversations/{id}/messages', {
      params: {
        path: { id },
        query: opts.multitask ? { multitask: opts.multitask } : undefined,
        header: {
          ...(opts.idempotencyKey ? { 'Idempotency-Key': opts.idempotencyKey } : {}),
          ...(opts.ifMatch ? { 'If-Match': opts.ifMatch } : {}),
        },
      },
      body,
    });
  const rename = (id: string, title: string, c: Client = alice) =>
    c.api.PATCH('/v1/conversations/{id}', { params: { path: { id } }, body: { title } });
  const listOf = async (c: Client = alice, query: { limit?: number; cursor?: string; bookId?: string } = {}) =>
    expectOk(await c.api.GET('/v1/conversations', { params: { query } }));
  /** A call that fails with a problem: `[what, status, code]`, compared in one go so a failure names the call. */
  type Call = [string, () => Promise<ApiResult<unknown, { code: string }>>];
  const answers = async (calls: Call[]) =>
    Promise.all(calls.map(async ([what, call]) => call().then((r) => [what, r.response.status, r.error?.code])));

  describe('auth and isolation', () => {
    it('answers 401 to a missing, forged or expired token', async () => {
      expect((await fetch(`${stack.base}/v1/conversations`)).status).toBe(401);
      const forged = tokenFor('alice', { secret: 'not-the-secret-' + 'y'.repeat(20) });
      expect(
        (await fetch(`${stack.base}/v1/conversations`, { headers: { authorization: `Bearer ${forged}` } })).status,
      ).toBe(401);
      const expired = tokenFor('alice', { ttlSeconds: -10 });
      const r = await fetch(`${stack.base}/v1/conversations`, { headers: { authorization: `Bearer ${expired}` } });
      expect(r.status).toBe(401);
      expect(await r.json()).toMatchObject({ status: 401, code: 'token_expired' });
    });

    it("answers 404 on every endpoint for another user's conversation, and never lists it", async () => {
      const { id } = await newConversation();
      const path = { id };
      const calls: Call[] = [
        ['GET', () => bob.api.GET('/v1/conversations/{id}', { params: { path } })],
        ['GET ?version=1', () => bob.api.GET('/v1/conversations/{id}', { params: { path, query: { version: 1 } } })],
        ['PATCH', () => rename(id, 'mine now', bob)],
        ['POST messages', () => postMessage(id, { content: 'hello' }, { c: bob })],
        ['GET messages', () => bob.api.GET('/v1/conversations/{id}/messages', { params: { path } })],
        ['GET events', () => bob.api.GET('/v1/conversations/{id}/events', { params: { path } })],
        ['POST fork', () => bob.api.POST('/v1/conversations/{id}/fork', { params: { path }, body: { version: 1 } })],
        [
          'POST cancel',
          () =>
            bob.api.POST('/v1/conversations/{id}/turns/{turnId}/cancel', {
              params: { path: { id, turnId: randomUUID() } },
            }),
        ],
        ['DELETE', () => bob.api.DELETE('/v1/conversations/{id}', { params: { path } })],
      ];
      expect(await answers(calls)).toEqual(calls.map(([what]) => [what, 404, 'conversation_not_found']));
      // the stream authenticated by ?access_token= alone (no Authorization header): raw fetch
      const sse = await fetch(`${stack.base}/v1/conversations/${id}/stream?access_token=${bob.token}`);
      expect(sse.status).toBe(404);
      expect((await listOf(bob)).items.map((c) => c.id)).not.toContain(id);
      expect((await eventsOf(id)).map((e) => e.type)).toEqual(['ConversationStarted']);
    });
  });

  describe('conversations', () => {
    it('creates, shows, renames, moves the reading position, and shows past versions', async () => {
      // raw: the OpenAPI document types readingPosition in the request bodies as an object, not an integer
      const create = await alice.req('POST', '/v1/conversations', { title: 'Tea party', readingPosition: 3 });
      expect(create.status).toBe(201);
      const created = create.body as Schemas['ConversationDto'];
      expect(created).toMatchObject({ title: 'Tea party', readingPosition: 3, version: 1, bookId: null });
      const patched = await alice.req('PATCH', `/v1/conversations/${created.id}`, {
        title: 'Mad tea party',
        readingPosition: 5,
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ title: 'Mad tea party', readingPosition: 5, version: 3 });
      const atVersion = (version: number) =>
        alice.api.GET('/v1/conversations/{id}', { params: { path: { id: created.id }, query: { version } } });
      const v1 = expectOk(await atVersion(1), 200);
      expect(v1).toMatchObject({ title: 'Tea party', readingPosition: 3, version: 1 });
      expect(expectProblem(await atVersion(9), 404).code).toBe('version_not_found');
      const nothing = await alice.api.PATCH('/v1/conversations/{id}', {
        params: { path: { id: created.id } },
        body: {},
      });
      expect(expectProblem(nothing, 400).code).toBe('validation_failed');
    });

    it('titles an untitled conversation from its first message, cut at a word boundary', async () => {
      const { id } = await newConversation();
      const content =
        'Why does the Hatter keep asking riddles that have no answers at all, and what does Alice make of it?';
      expectOk(await postMessage(id, { content }), 202);
      const shown = expectOk(await alice.api.GET('/v1/conversations/{id}', { params: { path: { id } } }));
      const title = shown.title ?? '';
      expect(title.length).toBeGreaterThan(0);
      expect(title.length).toBeLessThanOrEqual(60);
      expect(content.startsWith(title.replace(/…$/, ''))).toBe(true);
      await waitFor('the listed title', async () => {
        const { items } = await listOf(alice, { limit: 100 });
        return items.find((c) => c.id === id)?.title === shown.title;
      });
    });

    it('lists newest activity first, paged by cursor', async () => {
      const carol = clientFor(stack.base, `carol-${randomUUID()}`);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await newConversation(carol, { title: `c${i}` })).id);
      await postMessage(ids[1], { content: 'bump' }, { c: carol });
      const expected = [ids[1], ids[4], ids[3], ids[2], ids[0]];
      await waitFor('the read model to list all five', async () => {
        const { items } = await listOf(carol, { limit: 100 });
        return JSON.stringify(items.map((c) => c.id)) === JSON.stringify(expected);
      });
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Schemas['ConversationListDto'] = await listOf(carol, { limit: 2, cursor: cursor ?? undefined });
        seen.push(...page.items.map((c) => c.id));
        cursor = page.nextCursor;
      } while (cursor);
      expect(seen).toEqual(expected);
      const list = (query: { limit?: number; cursor?: string }) =>
        carol.api.GET('/v1/conversations', { params: { query } });
      expect(expectProblem(await list({ cursor: 'garbage' }), 400).code).toBe('validation_failed');
      expect(expectProblem(await list({ limit: 0 }), 400).code).toBe('validation_failed');
      expect((await listOf(carol, { bookId: randomUUID() })).items).toEqual([]);
    });

    it('deletes: the stream ends with the tombstone ConversationErased, then 404 everywhere and gone from the list', async () => {
      const { id } = await newConversation();
      const stream = openStream(`${stack.base}/v1/conversations/${id}/stream`, { token: alice.token });
      await stream.until('ConversationStarted', (f) => f.length >= 1);
      const remove = () => alice.api.DELETE('/v1/conversations/{id}', { params: { path: { id } } });
      expect((await remove()).response.status).toBe(204);
      await stream.until('ConversationErased on SSE', (f) => f.some((x) => x.event === 'ConversationErased'));
      stream.close();
      const path = { id };
      const calls: Call[] = [
        ['GET', () => alice.api.GET('/v1/conversations/{id}', { params: { path } })],
        ['GET events', () => alice.api.GET('/v1/conversations/{id}/events', { params: { path } })],
        ['GET ?version=1', () => alice.api.GET('/v1/conversations/{id}', { params: { path, query: { version: 1 } } })],
        ['POST messages', () => postMessage(id, { content: 'x' })],
        ['DELETE', remove],
      ];
      expect(await answers(calls)).toEqual(calls.map(([what]) => [what, 404, 'conversation_not_found']));
      await waitFor('the list to drop it', async () => {
        const { items } = await listOf(alice, { limit: 100 });
        return !items.some((c) => c.id === id);
      });
    });

    it('forks at a version: the new history is events 1..N, marked forkedFrom', async () => {
      const { id } = await newConversation(alice, { title: 'source' });
      expectOk(await rename(id, 'renamed'), 200);
      expectOk(await rename(id, 'renamed again'), 200);
      const forkAt = (version: number) =>
        alice.api.POST('/v1/conversations/{id}/fork', { params: { path: { id } }, body: { version } });
      const fork = expectOk(await forkAt(2), 201);
      expect(fork).toMatchObject({ title: 'renamed', forkedFrom: { conversationId: id, version: 2 }, version: 2 });
      const events = await eventsOf(fork.id);
      expect(events.map((e) => e.type)).toEqual(['ConversationStarted', 'ConversationRenamed']);
      expect(expectEvent(events[0], 'ConversationStarted').data.forkedFrom).toEqual({ conversationId: id, version: 2 });
      expect(expectProblem(await forkAt(99), 400).code).toBe('validation_failed');
      expect(expectProblem(await forkAt(0), 400).code).toBe('validation_failed');
    });

    it("deletes a book's conversations with it (erased each), and only those", async () => {
      const { id: bookId } = await newBook(alice);
      const about = await newConversation(alice, { bookId });
      const fork = expectOk(
        await alice.api.POST('/v1/conversations/{id}/fork', {
          params: { path: { id: about.id } },
          body: { version: 1 },
        }),
        201,
      );
      const other = await newConversation(alice);
      const book = { params: { path: { id: bookId } } };
      expect(expectProblem(await bob.api.DELETE('/v1/books/{id}', book), 404).code).toBe('book_not_found');
      expect((await alice.api.DELETE('/v1/books/{id}', book)).response.status).toBe(204);
      const show = (id: string) => alice.api.GET('/v1/conversations/{id}', { params: { path: { id } } });
      for (const id of [about.id, fork.id])
        expect(expectProblem(await show(id), 404).code).toBe('conversation_not_found');
      expectOk(await show(other.id), 200);
      expect(expectProblem(await alice.api.GET('/v1/books/{id}', book), 404).code).toBe('book_not_found');
      const search = await alice.api.GET('/v1/books/{id}/search', {
        params: { path: { id: bookId }, query: { q: 'lamp' } },
      });
      expect(expectProblem(search, 404).code).toBe('book_not_found');
    });

    it("answers 404 for a book that is not there, or is another user's", async () => {
      const create = (c: Client, bookId: string) => c.api.POST('/v1/conversations', { body: { bookId } });
      expect(expectProblem(await create(alice, randomUUID()), 404).code).toBe('book_not_found');
      const { id: bookId } = await newBook(alice);
      expect(expectProblem(await create(bob, bookId), 404).code).toBe('book_not_found');
      expectOk(await create(alice, bookId), 201);
    });
  });

  describe('posting', () => {
    it('answers 202 {messageId, turnId, version, position} and appends UserMessagePosted', async () => {
      const { id } = await newConversation();
      const posted = expectOk(
        await postMessage(id, { content: 'Who stole the tarts?', selectedText: 'The Knave' }),
        202,
      );
      expect(posted).toEqual({
        messageId: expect.any(String),
        turnId: expect.any(String),
        version: 2,
        position: expect.stringMatching(/^\d+$/),
      });
      const events = await eventsOf(id);
      expect(events[1]).toMatchObject({
        type: 'UserMessagePosted',
        version: 2,
        position: posted.position,
        data: {
          messageId: posted.messageId,
          turnId: posted.turnId,
          content: 'Who stole the tarts?',
          selectedText: 'The Knave',
        },
        metadata: { userId: alice.userId, correlationId: posted.turnId },
      });
    });

    it('returns the first answer to repeats of an Idempotency-Key, also when they race', async () => {
      const { id } = await newConversation();
      const post = () => postMessage(id, { content: 'once' }, { idempotencyKey: 'key-1' });
      const first = expectOk(await post(), 202);
      const repeats = await Promise.all(Array.from({ length: 10 }, post));
      expect(repeats.every((r) => r.response.status === 202 && JSON.stringify(r.data) === JSON.stringify(first))).toBe(
        true,
      );
      const racing = await Promise.all(
        Array.from({ length: 10 }, () => postMessage(id, { content: 'twice' }, { idempotencyKey: 'key-2' })),
      );
      // one answer for all ten: the same status and the same body
      expect(new Set(racing.map((r) => JSON.stringify([r.response.status, r.data ?? r.error]))).size).toBe(1);
      expect((await eventsOf(id)).filter((e) => e.type === 'UserMessagePosted')).toHaveLength(2);
    });

    it('answers 422 to an Idempotency-Key reused with another body, also when they race, appending nothing', async () => {
      const { id } = await newConversation();
      const post = (body: Schemas['PostMessageDto'], key = 'reused') => postMessage(id, body, { idempotencyKey: key });
      const first = expectOk(await post({ content: 'Who stole the tarts?', selectedText: 'The Knave' }), 202);
      for (const other of [
        { content: 'Who ate the tarts?', selectedText: 'The Knave' },
        { content: 'Who stole the tarts?' },
        { content: 'Who stole the tarts?', selectedText: 'The Queen' },
      ]) {
        const r = await post(other);
        expect([r.response.status, r.error]).toEqual([
          422,
          expect.objectContaining({ code: 'idempotency_key_reused', status: 422 }),
        ]);
      }
      expect((await post({ content: 'Who stole the tarts?', selectedText: 'The Knave' })).data).toEqual(first);
      const racing = await Promise.all(Array.from({ length: 8 }, (_, i) => post({ content: `race ${i}` }, 'race')));
      expect(racing.map((r) => r.response.status).sort()).toEqual([202, 422, 422, 422, 422, 422, 422, 422]);
      expect(racing.filter((r) => r.error).map((r) => r.error?.code)).toEqual(
        Array.from({ length: 7 }, () => 'idempotency_key_reused'),
      );
      const winner = racing.findIndex((r) => r.response.status === 202);
      const posted = (await eventsOf(id)).filter(isEvent('UserMessagePosted'));
      expect(posted.map((e) => e.data.content)).toEqual(['Who stole the tarts?', `race ${winner}`]);
      expect(posted[1].data.turnId).toBe(racing[winner].data?.turnId);
    });

    it('lets one of concurrent posts with the same If-Match win; the rest get 409', async () => {
      const { id } = await newConversation();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => postMessage(id, { content: `m${i}` }, { ifMatch: '"1"' })),
      );
      expect(results.filter((r) => r.response.status === 202)).toHaveLength(1);
      expect(results.filter((r) => r.response.status === 409)).toHaveLength(9);
      expect(results.find((r) => r.response.status === 409)!.error).toMatchObject({
        status: 409,
        code: 'version_conflict',
      });
      // raw: a malformed If-Match (not an entity tag)
      expect(
        (await alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'x' }, { 'if-match': 'nope' })).status,
      ).toBe(400);
    });

    it('rejects a post while a turn runs with ?multitask=reject; enqueues by default', async () => {
      const { id } = await newConversation();
      expectOk(await postMessage(id, { content: 'first' }), 202);
      const rejected = await postMessage(id, { content: 'second' }, { multitask: 'reject' });
      expect(expectProblem(rejected, 409).code).toBe('turn_in_progress');
      expectOk(await postMessage(id, { content: 'third' }), 202);
      // raw: a multitask mode the document does not list
      expect(
        (await alice.req('POST', `/v1/conversations/${id}/messages?multitask=sometimes`, { content: 'x' })).status,
      ).toBe(400);
    });

    it('cancels the running turn first with ?multitask=interrupt', async () => {
      const { id } = await newConversation();
      const first = expectOk(await postMessage(id, { content: 'first' }), 202);
      const second = expectOk(await postMessage(id, { content: 'second' }, { multitask: 'interrupt' }), 202);
      const types = (await eventsOf(id)).map((e) => [e.type, turnOf(e)]);
      expect(types.slice(1)).toEqual([
        ['UserMessagePosted', first.turnId],
        ['TurnCancelled', first.turnId],
        ['UserMessagePosted', second.turnId],
      ]);
    });

    it('interrupts every pending turn, also on a post with an Idempotency-Key, and a repeat changes nothing', async () => {
      const { id } = await newConversation();
      const t1 = expectOk(await postMessage(id, { content: 'one' }), 202).turnId;
      const t2 = expectOk(await postMessage(id, { content: 'two' }), 202).turnId;
      const post = () => postMessage(id, { content: 'three' }, { multitask: 'interrupt', idempotencyKey: 'int-1' });
      const first = expectOk(await post(), 202);
      expect(Object.keys(first).sort()).toEqual(['messageId', 'position', 'turnId', 'version']);
      expect((await post()).data).toEqual(first);
      const cancelled = (await eventsOf(id)).filter(isEvent('TurnCancelled')).map((e) => e.data.turnId);
      expect(cancelled).toEqual([t1, t2]);
    });

    it('enforces the limits with 400 naming the field (413 past 1 MB), appending nothing', async () => {
      const { id } = await newConversation();
      const label = (body: unknown) => JSON.stringify(body).slice(0, 40);
      // [body, status, code, the field the problem names]
      const cases: Array<[Schemas['PostMessageDto'], number, string, string?]> = [
        [{ content: '' }, 400, 'validation_failed', 'content'],
        [{ content: '   ' }, 400, 'validation_failed', 'content'],
        [{ content: 'x'.repeat(16_001) }, 400, 'validation_failed', 'content'],
        [{ content: 'ok', selectedText: 'x'.repeat(5_001) }, 400, 'validation_failed', 'selectedText'],
        [{ content: 'x'.repeat(1_100_000) }, 413, 'payload_too_large'],
      ];
      for (const [body, status, code, field] of cases) {
        const r = await postMessage(id, body);
        expect([label(body), r.response.status, r.error?.code]).toEqual([label(body), status, code]);
        if (field) expect((r.error?.errors ?? []).map((e) => e.field)).toContain(field);
      }
      // raw: what a typed client cannot send (a missing, mistyped or unknown field)
      const untyped: Array<[unknown, RegExp]> = [
        [{}, /content/],
        [{ content: 42 }, /content/],
        [{ content: 'ok', extra: true }, /extra/],
      ];
      for (const [body, field] of untyped) {
        const r = await alice.req('POST', `/v1/conversations/${id}/messages`, body);
        expect([label(body), r.status, r.body?.code]).toEqual([label(body), 400, 'validation_failed']);
        expect(JSON.stringify(r.body.errors)).toMatch(field);
      }
      const longTitle = await alice.api.POST('/v1/conversations', { body: { title: 't'.repeat(201) } });
      expect(expectProblem(longTitle, 400).code).toBe('validation_failed');
      // raw: malformed JSON
      expect((await alice.req('POST', `/v1/conversations/${id}/messages`, '{"content": "unterminated')).status).toBe(
        400,
      );
      expect(await eventsOf(id)).toHaveLength(1);
    });
  });

  describe('read models', () => {
    it('projects messages, oldest first and paged, and a rebuild gives the same read models', async () => {
      const { id } = await newConversation();
      for (const content of ['one', 'two', 'three']) expectOk(await postMessage(id, { content }), 202);
      const read = async () => {
        const all: Schemas['MessageDto'][] = [];
        let cursor: string | null = null;
        do {
          const page: Schemas['MessageListDto'] = expectOk(
            await alice.api.GET('/v1/conversations/{id}/messages', {
              params: { path: { id }, query: { limit: 2, cursor: cursor ?? undefined } },
            }),
          );
          all.push(...page.items);
          cursor = page.nextCursor;
        } while (cursor);
        return all;
      };
      await waitFor('three user messages', async () => (await read()).length === 3);
      const live = await read();
      expect(live.map((m) => [m.role, m.content])).toEqual([
        ['user', 'one'],
        ['user', 'two'],
        ['user', 'three'],
      ]);
      const listBefore = (await listOf(alice, { limit: 100 })).items;
      // asynchronously: a blocked event loop would miss the API closing idle keep-alive sockets
      // (after 5 s) and the next request would go out on a dead one ('other side closed')
      const { stdout: out } = await execFileAsync(
        process.execPath,
        [path.resolve(__dirname, '../../dist/scripts/cli.js'), 'projections', 'rebuild'],
        { env: { ...process.env, ...stack.env }, encoding: 'utf8' },
      );
      expect(out).toMatch(/\d+ events in [\d.]+ s \(\d+ events\/s\)/);
      expect(await read()).toEqual(live);
      expect((await listOf(alice, { limit: 100 })).items).toEqual(listBefore);
    });
  });

  describe('SSE stream', () => {
    it('replays after Last-Event-ID, then goes live, across API replicas', async () => {
      const { id } = await newConversation();
      expectOk(await postMessage(id, { content: 'one' }), 202);
      const onA = openStream(`${stack.apis[0].base}/v1/conversations/${id}/stream`, {
        token: alice.token,
        headers: { 'last-event-id': '1' },
      });
      await onA.until('the replayed message', (f) => f.length === 1);
      const viaB = clientFor(stack.apis[1].base, alice.userId);
      expectOk(await rename(id, 'posted through replica B', viaB), 200);
      await onA.until('the live rename from replica B', (f) => f.some((x) => x.event === 'ConversationRenamed'));
      onA.close();
      expect(onA.durable().map((f) => [f.id, f.event])).toEqual([
        ['2', 'UserMessagePosted'],
        ['3', 'ConversationRenamed'],
      ]);
      const frame = onA.durable()[1].data;
      expect(frame).toMatchObject({
        type: 'ConversationRenamed',
        conversationId: id,
        version: 3,
        data: { title: 'posted through replica B' },
      });
      expect(Object.keys(frame).sort()).toEqual([
        'conversationId',
        'data',
        'id',
        'metadata',
        'occurredAt',
        'position',
        'type',
        'version',
      ]);
    });

    it('takes ?after= and ?access_token=, and answers 400 to a bad Last-Event-ID', async () => {
      const { id } = await newConversation();
      expectOk(await rename(id, 'x'), 200);
      const s = openStream(`${stack.base}/v1/conversations/${id}/stream?after=1&access_token=${alice.token}`);
      await s.until('version 2', (f) => f.some((x) => x.id === '2'));
      s.close();
      expect(s.durable().map((f) => f.id)).toEqual(['2']);
      // raw: a malformed Last-Event-ID
      const bad = await fetch(`${stack.base}/v1/conversations/${id}/stream`, {
        headers: { ...alice.auth, 'last-event-id': 'abc' },
      });
      expect(bad.status).toBe(400);
      const negative = await alice.api.GET('/v1/conversations/{id}/stream', {
        params: { path: { id }, query: { after: -1 } },
        parseAs: 'stream',
      });
      await negative.data?.cancel();
      expect(expectProblem(negative, 400).code).toBe('validation_failed');
    });

    it('loses and duplicates nothing over 100 random disconnects while events are appended', async () => {
      const { startFlakyProxy } = await import('../support/flaky-proxy');
      const { id } = await newConversation();
      const apiPort = Number(new URL(stack.apis[1].base).port);
      const proxy = await startFlakyProxy(apiPort);
      const s = openStream(`${proxy.base}/v1/conversations/${id}/stream`, { token: alice.token });
      let appended = 1;
      const writer = (async () => {
        for (let i = 0; i < 150; i++) {
          expectOk(await rename(id, `title ${i}`), 200);
          appended++;
          await new Promise((res) => setTimeout(res, Math.random() * 15));
        }
      })();
      // each cut lands at a random moment of a stream that did open again (under load a reconnect
      // can take longer than the gap between cuts, and cutting only half-made connections tests little)
      for (let cut = 0; cut < 100; cut++) {
        const opened = s.opens;
        await waitFor('the client to reconnect', () => s.opens > opened, 10_000, 5);
        await new Promise((res) => setTimeout(res, 5 + Math.random() * 40));
        proxy.cutAll();
      }
      await writer;
      await s.until(`all ${appended} events`, (f) => f.length >= appended, 30_000);
      s.close();
      await proxy.close();
      const ids = s.durable().map((f) => Number(f.id));
      expect(ids).toEqual(Array.from({ length: appended }, (_, i) => i + 1));
      expect(s.opens).toBeGreaterThanOrEqual(100); // one open before each of the 100 cuts
    }, 120_000);
  });

  describe('a client that does not read', () => {
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const big = 'x'.repeat(15_000);

    /**
     * A conversation with 400 × 15 KB = 6 MB of events, far more than socket buffers hold,
     * appended in one statement: what is tested is the stream, and 400 posts (each starting a
     * turn) took over a minute on a loaded machine.
     */
    const bulkyConversation = async () => {
      const { id } = await newConversation();
      const bulk = Array.from({ length: 400 }, (_, i) => conversationRenamed(`${i} ${big}`));
      await new EventStore(stack.db.pool).append(conversationStreamId(id), bulk, { expectedVersion: 1 });
      return id;
    };

    /** Opens the stream on a raw socket that does not read until told to. */
    const openPaused = async (id: string) => {
      const net = await import('node:net');
      const { port } = new URL(stack.base);
      const socket = net.connect(Number(port), '127.0.0.1');
      socket.write(
        `GET /v1/conversations/${id}/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.token}\r\n\r\n`,
      );
      socket.pause();
      let received = 0;
      const ended = new Promise<void>((resolve) => {
        socket.on('end', () => resolve());
        socket.on('close', () => resolve());
      });
      socket.on('data', (d) => (received += d.length));
      return { socket, ended, received: () => received };
    };

    it('is dropped instead of buffering without bound', async () => {
      const client = await openPaused(await bulkyConversation());
      await sleep(3_000);
      client.socket.resume();
      await client.ended;
      // the server gave up well before sending them all
      expect(client.received()).toBeLessThan(400 * 15_000);
      expect(client.received()).toBeGreaterThan(0);
    }, 60_000);

    it('is dropped even while new events keep waking its stream', async () => {
      const id = await bulkyConversation();
      const client = await openPaused(id);
      let writing = true;
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          expectOk(
            await alice.api.PATCH('/v1/conversations/{id}', {
              params: { path: { id } },
              body: { title: `title ${i}`, readingPosition: i },
            }),
          );
          await sleep(100);
        }
      })();
      // three times SSE_SLOW_CLIENT_MS, with an event every 100 ms all along
      await sleep(3_000);
      client.socket.resume();
      const outcome = await Promise.race([client.ended.then(() => 'dropped'), sleep(5_000).then(() => 'still open')]);
      writing = false;
      await writer;
      client.socket.destroy();
      expect(outcome).toBe('dropped');
      expect(client.received()).toBeLessThan(400 * 15_000);
    }, 90_000);
  });

  describe('OpenAPI', () => {
    it('documents every endpoint and the event envelope at /docs', async () => {
      const doc = (await (await fetch(`${stack.base}/docs-json`)).json()) as any;
      const paths = Object.entries(doc.paths as Record<string, object>).flatMap(([p, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
      );
      for (const route of [
        'POST /v1/conversations',
        'GET /v1/conversations',
        'GET /v1/conversations/{id}',
        'PATCH /v1/conversations/{id}',
        'DELETE /v1/conversations/{id}',
        'POST /v1/conversations/{id}/messages',
        'GET /v1/conversations/{id}/messages',
        'GET /v1/conversations/{id}/events',
        'GET /v1/conversations/{id}/stream',
        'POST /v1/conversations/{id}/turns/{turnId}/cancel',
        'POST /v1/conversations/{id}/fork',
      ]) {
        expect(paths).toContain(route);
      }
      expect(doc.components.schemas.EventEnvelopeDto.properties).toHaveProperty('position');
    });
  });
});
