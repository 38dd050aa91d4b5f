import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Schemas } from '../../libs/api-client/src';
import { expectEvent, expectOk, expectProblem } from '../support/api';
import { ConversationsSuite, ProblemCall } from '../support/conversations-suite';
import { newBook } from '../support/factories/books';
import { openStream } from '../support/sse-client';
import { clientFor, Client, tokenFor } from '../support/stack';
import { waitFor } from '../support/wait-for';

const execFileAsync = promisify(execFile);

/** Conversations over HTTP, with two API replicas and a worker (projections) as separate processes: who may see what, the conversation's own life, its read models and its documentation. */
describe('conversations API (e2e)', () => {
  const suite = new ConversationsSuite();
  const { newConversation, eventsOf, postMessage, rename, listOf, answers } = suite;

  beforeAll(() => suite.start(), 60_000);
  afterAll(() => suite.stop());

  describe('auth and isolation', () => {
    it('answers 401 to a missing, forged or expired token', async () => {
      expect((await fetch(`${suite.stack.base}/v1/conversations`)).status).toBe(401);
      const forged = tokenFor('alice', { secret: 'not-the-secret-' + 'y'.repeat(20) });
      expect(
        (await fetch(`${suite.stack.base}/v1/conversations`, { headers: { authorization: `Bearer ${forged}` } }))
          .status,
      ).toBe(401);
      const expired = tokenFor('alice', { ttlSeconds: -10 });
      const r = await fetch(`${suite.stack.base}/v1/conversations`, {
        headers: { authorization: `Bearer ${expired}` },
      });
      expect(r.status).toBe(401);
      expect(await r.json()).toMatchObject({ status: 401, code: 'token_expired' });
    });

    it("answers 404 on every endpoint for another user's conversation, and never lists it", async () => {
      const { id } = await newConversation();
      const path = { id };
      const calls: ProblemCall[] = [
        ['GET', () => suite.bob.api.GET('/v1/conversations/{id}', { params: { path } })],
        [
          'GET ?version=1',
          () => suite.bob.api.GET('/v1/conversations/{id}', { params: { path, query: { version: 1 } } }),
        ],
        ['PATCH', () => rename(id, 'mine now', suite.bob)],
        ['POST messages', () => postMessage(id, { content: 'hello' }, { c: suite.bob })],
        ['GET messages', () => suite.bob.api.GET('/v1/conversations/{id}/messages', { params: { path } })],
        ['GET events', () => suite.bob.api.GET('/v1/conversations/{id}/events', { params: { path } })],
        [
          'POST fork',
          () => suite.bob.api.POST('/v1/conversations/{id}/fork', { params: { path }, body: { version: 1 } }),
        ],
        [
          'POST cancel',
          () =>
            suite.bob.api.POST('/v1/conversations/{id}/turns/{turnId}/cancel', {
              params: { path: { id, turnId: randomUUID() } },
            }),
        ],
        ['DELETE', () => suite.bob.api.DELETE('/v1/conversations/{id}', { params: { path } })],
      ];
      expect(await answers(calls)).toEqual(calls.map(([what]) => [what, 404, 'conversation_not_found']));
      // the stream authenticated by ?access_token= alone (no Authorization header): raw fetch
      const sse = await fetch(`${suite.stack.base}/v1/conversations/${id}/stream?access_token=${suite.bob.token}`);
      expect(sse.status).toBe(404);
      expect((await listOf(suite.bob)).items.map((c) => c.id)).not.toContain(id);
      expect((await eventsOf(id)).map((e) => e.type)).toEqual(['ConversationStarted']);
    });
  });

  describe('conversations', () => {
    it('creates, shows, renames, moves the reading position, and shows past versions', async () => {
      // raw: the OpenAPI document types readingPosition in the request bodies as an object, not an integer
      const create = await suite.alice.req('POST', '/v1/conversations', { title: 'Tea party', readingPosition: 3 });
      expect(create.status).toBe(201);
      const created = create.body as Schemas['ConversationDto'];
      expect(created).toMatchObject({ title: 'Tea party', readingPosition: 3, version: 1, bookId: null });
      const patched = await suite.alice.req('PATCH', `/v1/conversations/${created.id}`, {
        title: 'Mad tea party',
        readingPosition: 5,
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ title: 'Mad tea party', readingPosition: 5, version: 3 });
      const atVersion = (version: number) =>
        suite.alice.api.GET('/v1/conversations/{id}', { params: { path: { id: created.id }, query: { version } } });
      const v1 = expectOk(await atVersion(1), 200);
      expect(v1).toMatchObject({ title: 'Tea party', readingPosition: 3, version: 1 });
      expect(expectProblem(await atVersion(9), 404).code).toBe('version_not_found');
      const nothing = await suite.alice.api.PATCH('/v1/conversations/{id}', {
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
      const shown = expectOk(await suite.alice.api.GET('/v1/conversations/{id}', { params: { path: { id } } }));
      const title = shown.title ?? '';
      expect(title.length).toBeGreaterThan(0);
      expect(title.length).toBeLessThanOrEqual(60);
      expect(content.startsWith(title.replace(/…$/, ''))).toBe(true);
      await waitFor('the listed title', async () => {
        const { items } = await listOf(suite.alice, { limit: 100 });
        return items.find((c) => c.id === id)?.title === shown.title;
      });
    });

    it('lists newest activity first, paged by cursor', async () => {
      const carol = clientFor(suite.stack.base, `carol-${randomUUID()}`);
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
      const stream = openStream(`${suite.stack.base}/v1/conversations/${id}/stream`, { token: suite.alice.token });
      await stream.until('ConversationStarted', (f) => f.length >= 1);
      const remove = () => suite.alice.api.DELETE('/v1/conversations/{id}', { params: { path: { id } } });
      expect((await remove()).response.status).toBe(204);
      await stream.until('ConversationErased on SSE', (f) => f.some((x) => x.event === 'ConversationErased'));
      stream.close();
      const path = { id };
      const calls: ProblemCall[] = [
        ['GET', () => suite.alice.api.GET('/v1/conversations/{id}', { params: { path } })],
        ['GET events', () => suite.alice.api.GET('/v1/conversations/{id}/events', { params: { path } })],
        [
          'GET ?version=1',
          () => suite.alice.api.GET('/v1/conversations/{id}', { params: { path, query: { version: 1 } } }),
        ],
        ['POST messages', () => postMessage(id, { content: 'x' })],
        ['DELETE', remove],
      ];
      expect(await answers(calls)).toEqual(calls.map(([what]) => [what, 404, 'conversation_not_found']));
      await waitFor('the list to drop it', async () => {
        const { items } = await listOf(suite.alice, { limit: 100 });
        return !items.some((c) => c.id === id);
      });
    });

    it('forks at a version: the new history is events 1..N, marked forkedFrom', async () => {
      const { id } = await newConversation(suite.alice, { title: 'source' });
      expectOk(await rename(id, 'renamed'), 200);
      expectOk(await rename(id, 'renamed again'), 200);
      const forkAt = (version: number) =>
        suite.alice.api.POST('/v1/conversations/{id}/fork', { params: { path: { id } }, body: { version } });
      const fork = expectOk(await forkAt(2), 201);
      expect(fork).toMatchObject({ title: 'renamed', forkedFrom: { conversationId: id, version: 2 }, version: 2 });
      const events = await eventsOf(fork.id);
      expect(events.map((e) => e.type)).toEqual(['ConversationStarted', 'ConversationRenamed']);
      expect(expectEvent(events[0], 'ConversationStarted').data.forkedFrom).toEqual({ conversationId: id, version: 2 });
      expect(expectProblem(await forkAt(99), 400).code).toBe('validation_failed');
      expect(expectProblem(await forkAt(0), 400).code).toBe('validation_failed');
    });

    it("deletes a book's conversations with it (erased each), and only those", async () => {
      const { id: bookId } = await newBook(suite.alice);
      const about = await newConversation(suite.alice, { bookId });
      const fork = expectOk(
        await suite.alice.api.POST('/v1/conversations/{id}/fork', {
          params: { path: { id: about.id } },
          body: { version: 1 },
        }),
        201,
      );
      const other = await newConversation(suite.alice);
      const book = { params: { path: { id: bookId } } };
      expect(expectProblem(await suite.bob.api.DELETE('/v1/books/{id}', book), 404).code).toBe('book_not_found');
      expect((await suite.alice.api.DELETE('/v1/books/{id}', book)).response.status).toBe(204);
      const show = (id: string) => suite.alice.api.GET('/v1/conversations/{id}', { params: { path: { id } } });
      for (const id of [about.id, fork.id])
        expect(expectProblem(await show(id), 404).code).toBe('conversation_not_found');
      expectOk(await show(other.id), 200);
      expect(expectProblem(await suite.alice.api.GET('/v1/books/{id}', book), 404).code).toBe('book_not_found');
      const search = await suite.alice.api.GET('/v1/books/{id}/search', {
        params: { path: { id: bookId }, query: { q: 'lamp' } },
      });
      expect(expectProblem(search, 404).code).toBe('book_not_found');
    });

    it("answers 404 for a book that is not there, or is another user's", async () => {
      const create = (c: Client, bookId: string) => c.api.POST('/v1/conversations', { body: { bookId } });
      expect(expectProblem(await create(suite.alice, randomUUID()), 404).code).toBe('book_not_found');
      const { id: bookId } = await newBook(suite.alice);
      expect(expectProblem(await create(suite.bob, bookId), 404).code).toBe('book_not_found');
      expectOk(await create(suite.alice, bookId), 201);
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
            await suite.alice.api.GET('/v1/conversations/{id}/messages', {
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
      const listBefore = (await listOf(suite.alice, { limit: 100 })).items;
      // asynchronously: a blocked event loop would miss the API closing idle keep-alive sockets
      // (after 5 s) and the next request would go out on a dead one ('other side closed')
      const { stdout: out } = await execFileAsync(
        process.execPath,
        [path.resolve(__dirname, '../../dist/scripts/cli.js'), 'projections', 'rebuild'],
        { env: { ...process.env, ...suite.stack.env }, encoding: 'utf8' },
      );
      expect(out).toMatch(/\d+ events in [\d.]+ s \(\d+ events\/s\)/);
      expect(await read()).toEqual(live);
      expect((await listOf(suite.alice, { limit: 100 })).items).toEqual(listBefore);
    });
  });

  describe('OpenAPI', () => {
    it('documents every endpoint and the event envelope at /docs', async () => {
      const doc = (await (await fetch(`${suite.stack.base}/docs-json`)).json()) as any;
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
