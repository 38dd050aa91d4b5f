import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { newBook } from '../support/factories/books';
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

  const newConversation = async (c: Client = alice, body: object = {}) => {
    const r = await c.req('POST', '/v1/conversations', body);
    expect(r.status).toBe(201);
    return r.body as { id: string; version: number; title: string | null };
  };
  const eventsOf = async (id: string, c: Client = alice) =>
    (await c.req('GET', `/v1/conversations/${id}/events`)).body.items as any[];

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
      expect(await r.json()).toMatchObject({
        statusCode: 401,
        error: 'Unauthorized',
        message: 'the token has expired',
      });
    });

    it("answers 404 on every endpoint for another user's conversation, and never lists it", async () => {
      const { id } = await newConversation();
      const calls: Array<[string, string, unknown?]> = [
        ['GET', `/v1/conversations/${id}`],
        ['GET', `/v1/conversations/${id}?version=1`],
        ['PATCH', `/v1/conversations/${id}`, { title: 'mine now' }],
        ['POST', `/v1/conversations/${id}/messages`, { content: 'hello' }],
        ['GET', `/v1/conversations/${id}/messages`],
        ['GET', `/v1/conversations/${id}/events`],
        ['POST', `/v1/conversations/${id}/fork`, { version: 1 }],
        ['POST', `/v1/conversations/${id}/turns/${randomUUID()}/cancel`],
        ['DELETE', `/v1/conversations/${id}`],
      ];
      for (const [method, p, body] of calls) {
        const r = await bob.req(method, p, body);
        expect([method, p, r.status]).toEqual([method, p, 404]);
      }
      const sse = await fetch(`${stack.base}/v1/conversations/${id}/stream?access_token=${bob.token}`);
      expect(sse.status).toBe(404);
      expect((await bob.req('GET', '/v1/conversations')).body.items.map((c: any) => c.id)).not.toContain(id);
      expect((await eventsOf(id)).map((e) => e.type)).toEqual(['ConversationStarted']);
    });
  });

  describe('conversations', () => {
    it('creates, shows, renames, moves the reading position, and shows past versions', async () => {
      const created = await newConversation(alice, { title: 'Tea party', readingPosition: 3 });
      expect(created).toMatchObject({ title: 'Tea party', readingPosition: 3, version: 1, bookId: null });
      const patched = await alice.req('PATCH', `/v1/conversations/${created.id}`, {
        title: 'Mad tea party',
        readingPosition: 5,
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ title: 'Mad tea party', readingPosition: 5, version: 3 });
      const v1 = await alice.req('GET', `/v1/conversations/${created.id}?version=1`);
      expect(v1.body).toMatchObject({ title: 'Tea party', readingPosition: 3, version: 1 });
      expect((await alice.req('GET', `/v1/conversations/${created.id}?version=9`)).status).toBe(404);
      expect((await alice.req('PATCH', `/v1/conversations/${created.id}`, {})).status).toBe(400);
    });

    it('titles an untitled conversation from its first message, cut at a word boundary', async () => {
      const { id } = await newConversation();
      const content =
        'Why does the Hatter keep asking riddles that have no answers at all, and what does Alice make of it?';
      expect((await alice.req('POST', `/v1/conversations/${id}/messages`, { content })).status).toBe(202);
      const shown = (await alice.req('GET', `/v1/conversations/${id}`)).body;
      expect(shown.title.length).toBeLessThanOrEqual(60);
      expect(content.startsWith(shown.title.replace(/…$/, ''))).toBe(true);
      await waitFor('the listed title', async () => {
        const items = (await alice.req('GET', '/v1/conversations?limit=100')).body.items;
        return items.find((c: any) => c.id === id)?.title === shown.title;
      });
    });

    it('lists newest activity first, paged by cursor', async () => {
      const carol = clientFor(stack.base, `carol-${randomUUID()}`);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await newConversation(carol, { title: `c${i}` })).id);
      await carol.req('POST', `/v1/conversations/${ids[1]}/messages`, { content: 'bump' });
      const expected = [ids[1], ids[4], ids[3], ids[2], ids[0]];
      await waitFor('the read model to list all five', async () => {
        const r = await carol.req('GET', '/v1/conversations?limit=100');
        return JSON.stringify(r.body.items.map((c: any) => c.id)) === JSON.stringify(expected);
      });
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const r: any = await carol.req('GET', `/v1/conversations?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        expect(r.status).toBe(200);
        seen.push(...r.body.items.map((c: any) => c.id));
        cursor = r.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual(expected);
      expect((await carol.req('GET', '/v1/conversations?cursor=garbage')).status).toBe(400);
      expect((await carol.req('GET', '/v1/conversations?limit=0')).status).toBe(400);
      expect((await carol.req('GET', `/v1/conversations?bookId=${randomUUID()}`)).body.items).toEqual([]);
    });

    it('deletes: ConversationDeleted, then 404 everywhere and gone from the list', async () => {
      const { id } = await newConversation();
      const stream = openStream(`${stack.base}/v1/conversations/${id}/stream`, { token: alice.token });
      await stream.until('ConversationStarted', (f) => f.length >= 1);
      expect((await alice.req('DELETE', `/v1/conversations/${id}`)).status).toBe(204);
      await stream.until('ConversationDeleted on SSE', (f) => f.some((x) => x.event === 'ConversationDeleted'));
      stream.close();
      for (const [m, p] of [
        ['GET', `/v1/conversations/${id}`],
        ['GET', `/v1/conversations/${id}/events`],
        ['GET', `/v1/conversations/${id}?version=1`],
        ['POST', `/v1/conversations/${id}/messages`],
        ['DELETE', `/v1/conversations/${id}`],
      ]) {
        expect((await alice.req(m, p, m === 'POST' ? { content: 'x' } : undefined)).status).toBe(404);
      }
      await waitFor('the list to drop it', async () => {
        const items = (await alice.req('GET', '/v1/conversations?limit=100')).body.items;
        return !items.some((c: any) => c.id === id);
      });
    });

    it('forks at a version: the new history is events 1..N, marked forkedFrom', async () => {
      const { id } = await newConversation(alice, { title: 'source' });
      await alice.req('PATCH', `/v1/conversations/${id}`, { title: 'renamed' });
      await alice.req('PATCH', `/v1/conversations/${id}`, { title: 'renamed again' });
      const fork = await alice.req('POST', `/v1/conversations/${id}/fork`, { version: 2 });
      expect(fork.status).toBe(201);
      expect(fork.body).toMatchObject({ title: 'renamed', forkedFrom: { conversationId: id, version: 2 }, version: 2 });
      const events = await eventsOf(fork.body.id);
      expect(events.map((e) => e.type)).toEqual(['ConversationStarted', 'ConversationRenamed']);
      expect(events[0].data.forkedFrom).toEqual({ conversationId: id, version: 2 });
      expect((await alice.req('POST', `/v1/conversations/${id}/fork`, { version: 99 })).status).toBe(400);
      expect((await alice.req('POST', `/v1/conversations/${id}/fork`, { version: 0 })).status).toBe(400);
    });

    it("deletes a book's conversations with it (ConversationDeleted each), and only those", async () => {
      const { id: bookId } = await newBook(alice);
      const about = await newConversation(alice, { bookId });
      const fork = (await alice.req('POST', `/v1/conversations/${about.id}/fork`, { version: 1 })).body;
      const other = await newConversation(alice);
      expect((await bob.req('DELETE', `/v1/books/${bookId}`)).status).toBe(404);
      expect((await alice.req('DELETE', `/v1/books/${bookId}`)).status).toBe(204);
      for (const id of [about.id, fork.id])
        expect((await alice.req('GET', `/v1/conversations/${id}`)).status).toBe(404);
      expect((await alice.req('GET', `/v1/conversations/${other.id}`)).status).toBe(200);
      expect((await alice.req('GET', `/v1/books/${bookId}`)).status).toBe(404);
      expect((await alice.req('GET', `/v1/books/${bookId}/search?q=lamp`)).status).toBe(404);
    });

    it("answers 404 for a book that is not there, or is another user's", async () => {
      const r = await alice.req('POST', '/v1/conversations', { bookId: randomUUID() });
      expect(r.status).toBe(404);
      const { id: bookId } = await newBook(alice);
      expect((await bob.req('POST', '/v1/conversations', { bookId })).status).toBe(404);
      expect((await alice.req('POST', '/v1/conversations', { bookId })).status).toBe(201);
    });
  });

  describe('posting', () => {
    it('answers 202 {messageId, turnId, version, position} and appends UserMessagePosted', async () => {
      const { id } = await newConversation();
      const r = await alice.req('POST', `/v1/conversations/${id}/messages`, {
        content: 'Who stole the tarts?',
        selectedText: 'The Knave',
      });
      expect(r.status).toBe(202);
      expect(r.body).toEqual({
        messageId: expect.any(String),
        turnId: expect.any(String),
        version: 2,
        position: expect.stringMatching(/^\d+$/),
      });
      const events = await eventsOf(id);
      expect(events[1]).toMatchObject({
        type: 'UserMessagePosted',
        version: 2,
        position: r.body.position,
        data: {
          messageId: r.body.messageId,
          turnId: r.body.turnId,
          content: 'Who stole the tarts?',
          selectedText: 'The Knave',
        },
        metadata: { userId: alice.userId, correlationId: r.body.turnId },
      });
    });

    it('returns the first answer to repeats of an Idempotency-Key, also when they race', async () => {
      const { id } = await newConversation();
      const post = () =>
        alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'once' }, { 'idempotency-key': 'key-1' });
      const first = await post();
      const repeats = await Promise.all(Array.from({ length: 10 }, post));
      expect(repeats.every((r) => r.status === 202 && JSON.stringify(r.body) === JSON.stringify(first.body))).toBe(
        true,
      );
      const racing = await Promise.all(
        Array.from({ length: 10 }, () =>
          alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'twice' }, { 'idempotency-key': 'key-2' }),
        ),
      );
      expect(new Set(racing.map((r) => r.text)).size).toBe(1);
      expect((await eventsOf(id)).filter((e) => e.type === 'UserMessagePosted')).toHaveLength(2);
    });

    it('answers 422 to an Idempotency-Key reused with another body, also when they race, appending nothing', async () => {
      const { id } = await newConversation();
      const post = (body: object, key = 'reused') =>
        alice.req('POST', `/v1/conversations/${id}/messages`, body, { 'idempotency-key': key });
      const first = await post({ content: 'Who stole the tarts?', selectedText: 'The Knave' });
      expect(first.status).toBe(202);
      for (const other of [
        { content: 'Who ate the tarts?', selectedText: 'The Knave' },
        { content: 'Who stole the tarts?' },
        { content: 'Who stole the tarts?', selectedText: 'The Queen' },
      ]) {
        const r = await post(other);
        expect([r.status, r.body]).toEqual([
          422,
          expect.objectContaining({
            code: 'idempotency_key_reused',
            statusCode: 422,
            error: 'Unprocessable Entity',
            message: expect.stringMatching(/Idempotency-Key/),
          }),
        ]);
      }
      expect((await post({ content: 'Who stole the tarts?', selectedText: 'The Knave' })).body).toEqual(first.body);
      const racing = await Promise.all(Array.from({ length: 8 }, (_, i) => post({ content: `race ${i}` }, 'race')));
      expect(racing.map((r) => r.status).sort()).toEqual([202, 422, 422, 422, 422, 422, 422, 422]);
      const winner = racing.findIndex((r) => r.status === 202);
      const posted = (await eventsOf(id)).filter((e) => e.type === 'UserMessagePosted');
      expect(posted.map((e) => e.data.content)).toEqual(['Who stole the tarts?', `race ${winner}`]);
      expect(posted[1].data.turnId).toBe(racing[winner].body.turnId);
    });

    it('lets one of concurrent posts with the same If-Match win; the rest get 409', async () => {
      const { id } = await newConversation();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          alice.req('POST', `/v1/conversations/${id}/messages`, { content: `m${i}` }, { 'if-match': '"1"' }),
        ),
      );
      expect(results.filter((r) => r.status === 202)).toHaveLength(1);
      expect(results.filter((r) => r.status === 409)).toHaveLength(9);
      expect(results.find((r) => r.status === 409)!.body).toMatchObject({ statusCode: 409, error: 'Conflict' });
      expect(
        (await alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'x' }, { 'if-match': 'nope' })).status,
      ).toBe(400);
    });

    it('rejects a post while a turn runs with ?multitask=reject; enqueues by default', async () => {
      const { id } = await newConversation();
      expect((await alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'first' })).status).toBe(202);
      expect(
        (await alice.req('POST', `/v1/conversations/${id}/messages?multitask=reject`, { content: 'second' })).status,
      ).toBe(409);
      expect((await alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'third' })).status).toBe(202);
      expect(
        (await alice.req('POST', `/v1/conversations/${id}/messages?multitask=sometimes`, { content: 'x' })).status,
      ).toBe(400);
    });

    it('cancels the running turn first with ?multitask=interrupt', async () => {
      const { id } = await newConversation();
      const first = await alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'first' });
      const second = await alice.req('POST', `/v1/conversations/${id}/messages?multitask=interrupt`, {
        content: 'second',
      });
      expect(second.status).toBe(202);
      const types = (await eventsOf(id)).map((e) => [e.type, e.data.turnId]);
      expect(types.slice(1)).toEqual([
        ['UserMessagePosted', first.body.turnId],
        ['TurnCancelled', first.body.turnId],
        ['UserMessagePosted', second.body.turnId],
      ]);
    });

    it('interrupts every pending turn, also on a post with an Idempotency-Key, and a repeat changes nothing', async () => {
      const { id } = await newConversation();
      const t1 = (await alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'one' })).body.turnId;
      const t2 = (await alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'two' })).body.turnId;
      const post = () =>
        alice.req(
          'POST',
          `/v1/conversations/${id}/messages?multitask=interrupt`,
          { content: 'three' },
          { 'idempotency-key': 'int-1' },
        );
      const first = await post();
      expect(first.status).toBe(202);
      expect(Object.keys(first.body).sort()).toEqual(['messageId', 'position', 'turnId', 'version']);
      expect((await post()).body).toEqual(first.body);
      const cancelled = (await eventsOf(id)).filter((e) => e.type === 'TurnCancelled').map((e) => e.data.turnId);
      expect(cancelled).toEqual([t1, t2]);
    });

    it('enforces the limits with 400 naming the field (413 past 1 MB), appending nothing', async () => {
      const { id } = await newConversation();
      const cases: Array<[unknown, number, RegExp]> = [
        [{ content: '' }, 400, /content/],
        [{ content: '   ' }, 400, /content/],
        [{}, 400, /content/],
        [{ content: 42 }, 400, /content/],
        [{ content: 'x'.repeat(16_001) }, 400, /content/],
        [{ content: 'ok', selectedText: 'x'.repeat(5_001) }, 400, /selectedText/],
        [{ content: 'ok', extra: true }, 400, /extra/],
        [{ content: 'x'.repeat(1_100_000) }, 413, /too large/],
      ];
      for (const [body, status, message] of cases) {
        const r = await alice.req('POST', `/v1/conversations/${id}/messages`, body);
        expect([JSON.stringify(body).slice(0, 40), r.status]).toEqual([JSON.stringify(body).slice(0, 40), status]);
        expect(JSON.stringify(r.body.message)).toMatch(message);
      }
      expect((await alice.req('POST', '/v1/conversations', { title: 't'.repeat(201) })).status).toBe(400);
      expect((await alice.req('POST', `/v1/conversations/${id}/messages`, '{"content": "unterminated')).status).toBe(
        400,
      );
      expect(await eventsOf(id)).toHaveLength(1);
    });
  });

  describe('read models', () => {
    it('projects messages, oldest first and paged, and a rebuild gives the same read models', async () => {
      const { id } = await newConversation();
      for (const content of ['one', 'two', 'three'])
        await alice.req('POST', `/v1/conversations/${id}/messages`, { content });
      const read = async () => {
        const all: any[] = [];
        let cursor: string | null = null;
        do {
          const r: any = await alice.req(
            'GET',
            `/v1/conversations/${id}/messages?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
          );
          all.push(...r.body.items);
          cursor = r.body.nextCursor;
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
      const listBefore = (await alice.req('GET', '/v1/conversations?limit=100')).body.items;
      // asynchronously: a blocked event loop would miss the API closing idle keep-alive sockets
      // (after 5 s) and the next request would go out on a dead one ('other side closed')
      const { stdout: out } = await execFileAsync(
        process.execPath,
        [path.resolve(__dirname, '../../dist/scripts/cli.js'), 'projections', 'rebuild'],
        { env: { ...process.env, ...stack.env }, encoding: 'utf8' },
      );
      expect(out).toMatch(/\d+ events in [\d.]+ s \(\d+ events\/s\)/);
      expect(await read()).toEqual(live);
      expect((await alice.req('GET', '/v1/conversations?limit=100')).body.items).toEqual(listBefore);
    });
  });

  describe('SSE stream', () => {
    it('replays after Last-Event-ID, then goes live, across API replicas', async () => {
      const { id } = await newConversation();
      await alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'one' });
      const onA = openStream(`${stack.apis[0].base}/v1/conversations/${id}/stream`, {
        token: alice.token,
        headers: { 'last-event-id': '1' },
      });
      await onA.until('the replayed message', (f) => f.length === 1);
      const viaB = clientFor(stack.apis[1].base, alice.userId);
      await viaB.req('PATCH', `/v1/conversations/${id}`, { title: 'posted through replica B' });
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
      await alice.req('PATCH', `/v1/conversations/${id}`, { title: 'x' });
      const s = openStream(`${stack.base}/v1/conversations/${id}/stream?after=1&access_token=${alice.token}`);
      await s.until('version 2', (f) => f.some((x) => x.id === '2'));
      s.close();
      expect(s.durable().map((f) => f.id)).toEqual(['2']);
      const bad = await fetch(`${stack.base}/v1/conversations/${id}/stream`, {
        headers: { ...alice.auth, 'last-event-id': 'abc' },
      });
      expect(bad.status).toBe(400);
      expect(
        (await fetch(`${stack.base}/v1/conversations/${id}/stream?after=-1`, { headers: alice.auth })).status,
      ).toBe(400);
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
          const r = await alice.req('PATCH', `/v1/conversations/${id}`, { title: `title ${i}` });
          expect(r.status).toBe(200);
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

    /** A conversation with 400 × 15 KB = 6 MB of events, far more than socket buffers hold. */
    const bulkyConversation = async () => {
      const { id } = await newConversation();
      for (let i = 0; i < 400; i++)
        await alice.req('POST', `/v1/conversations/${id}/messages`, { content: `${i} ${big}` });
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
          const r = await alice.req('PATCH', `/v1/conversations/${id}`, { title: `title ${i}`, readingPosition: i });
          expect(r.status).toBe(200);
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
