import { conversationStreamId } from '@parley/conversation';
import { EventStore } from '@parley/event-store';
import type { Schemas } from '../../libs/api-client/src';
import { expectOk, expectProblem, isEvent, turnOf } from '../support/api';
import { ConversationsSuite } from '../support/conversations-suite';
import { conversationRenamed } from '../support/factories/events';
import { openStream } from '../support/sse-client';
import { clientFor } from '../support/stack';
import { waitFor } from '../support/wait-for';

/** Messages in and events out over HTTP, with two API replicas and a worker as separate processes: posting (idempotency, concurrency, multitask, limits) and the SSE stream (replay, reconnects, slow clients). */
describe('conversations API: posting and streaming (e2e)', () => {
  const suite = new ConversationsSuite();
  const { newConversation, eventsOf, postMessage, rename } = suite;

  beforeAll(() => suite.start(), 60_000);
  afterAll(() => suite.stop());

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
        metadata: { userId: suite.alice.userId, correlationId: posted.turnId },
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
        (await suite.alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'x' }, { 'if-match': 'nope' }))
          .status,
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
        (await suite.alice.req('POST', `/v1/conversations/${id}/messages?multitask=sometimes`, { content: 'x' }))
          .status,
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
        const r = await suite.alice.req('POST', `/v1/conversations/${id}/messages`, body);
        expect([label(body), r.status, r.body?.code]).toEqual([label(body), 400, 'validation_failed']);
        expect(JSON.stringify(r.body.errors)).toMatch(field);
      }
      const longTitle = await suite.alice.api.POST('/v1/conversations', { body: { title: 't'.repeat(201) } });
      expect(expectProblem(longTitle, 400).code).toBe('validation_failed');
      // raw: malformed JSON
      expect(
        (await suite.alice.req('POST', `/v1/conversations/${id}/messages`, '{"content": "unterminated')).status,
      ).toBe(400);
      expect(await eventsOf(id)).toHaveLength(1);
    });
  });

  describe('SSE stream', () => {
    it('replays after Last-Event-ID, then goes live, across API replicas', async () => {
      const { id } = await newConversation();
      expectOk(await postMessage(id, { content: 'one' }), 202);
      const onA = openStream(`${suite.stack.apis[0].base}/v1/conversations/${id}/stream`, {
        token: suite.alice.token,
        headers: { 'last-event-id': '1' },
      });
      await onA.until('the replayed message', (f) => f.length === 1);
      const viaB = clientFor(suite.stack.apis[1].base, suite.alice.userId);
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
      const s = openStream(
        `${suite.stack.base}/v1/conversations/${id}/stream?after=1&access_token=${suite.alice.token}`,
      );
      await s.until('version 2', (f) => f.some((x) => x.id === '2'));
      s.close();
      expect(s.durable().map((f) => f.id)).toEqual(['2']);
      // raw: a malformed Last-Event-ID
      const bad = await fetch(`${suite.stack.base}/v1/conversations/${id}/stream`, {
        headers: { ...suite.alice.auth, 'last-event-id': 'abc' },
      });
      expect(bad.status).toBe(400);
      const negative = await suite.alice.api.GET('/v1/conversations/{id}/stream', {
        params: { path: { id }, query: { after: -1 } },
        parseAs: 'stream',
      });
      await negative.data?.cancel();
      expect(expectProblem(negative, 400).code).toBe('validation_failed');
    });

    it('loses and duplicates nothing over 100 random disconnects while events are appended', async () => {
      const { startFlakyProxy } = await import('../support/flaky-proxy');
      const { id } = await newConversation();
      const apiPort = Number(new URL(suite.stack.apis[1].base).port);
      const proxy = await startFlakyProxy(apiPort);
      const s = openStream(`${proxy.base}/v1/conversations/${id}/stream`, { token: suite.alice.token });
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
      await new EventStore(suite.stack.db.pool).append(conversationStreamId(id), bulk, { expectedVersion: 1 });
      return id;
    };

    /** Opens the stream on a raw socket that does not read until told to. */
    const openPaused = async (id: string) => {
      const net = await import('node:net');
      const { port } = new URL(suite.stack.base);
      const socket = net.connect(Number(port), '127.0.0.1');
      socket.write(
        `GET /v1/conversations/${id}/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${suite.alice.token}\r\n\r\n`,
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
            await suite.alice.api.PATCH('/v1/conversations/{id}', {
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
});
