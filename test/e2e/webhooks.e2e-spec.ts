/**
 * Webhooks (docs/webhooks.md) end to end: the real API and worker, a receiver that verifies every
 * delivery with `standardwebhooks`, as an app developer's would. Registration, each kind's
 * delivery signed and shaped as Standard Webhooks says, readers kept apart, retries with the
 * same webhook-id, an endpoint disabled after its last try, erasure of pending deliveries, and
 * the SSRF refusals of a server that does not allow private URLs.
 */
import { randomUUID } from 'node:crypto';
import { expectOk } from '../support/api';
import type { FakeReply } from '../support/fake-anthropic/fake-anthropic.server';
import { newBook } from '../support/factories/books';
import { Client, clientFor } from '../support/stack';
import { useFakeStack, useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';
import { startWebhookReceiver, WebhookReceiver, type Answer } from '../support/webhook-receiver';

const answer = (): FakeReply => ({ content: [{ type: 'text', text: 'Marisol relit the lamp.' }] });

/** Registers an endpoint at the receiver's `path` for `events`; the receiver verifies with its secret. */
async function register(
  c: Client,
  receiver: WebhookReceiver,
  path: string,
  events: string[],
  answerWith?: Answer,
): Promise<{ id: string; secret: string }> {
  const r = await c.req('POST', '/v1/webhooks', { url: receiver.url(path), events });
  expect(r.status).toBe(201);
  receiver.expect(path, r.body.secret, answerWith);
  return r.body;
}

const endpointsOf = async (c: Client) => (await c.req('GET', '/v1/webhooks')).body.items as any[];

describe('webhooks (e2e)', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver?.close());
  const s = useReaderStack({
    fake: { defaultResponder: answer },
    env: {
      // the receiver listens on loopback
      WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOKS_MAX_ATTEMPTS: '3',
      WEBHOOKS_RETRY_BASE_MS: '200',
      WEBHOOKS_RETRY_MAX_MS: '800',
    },
  });
  const reader = () => clientFor(s.stack.base, `reader-${randomUUID()}`);
  const conversationOf = async (c: Client, bookId: string) =>
    expectOk(await c.api.POST('/v1/conversations', { body: { bookId } }), 201).id;
  const post = async (c: Client, id: string, content: string) =>
    expectOk(await c.api.POST('/v1/conversations/{id}/messages', { params: { path: { id } }, body: { content } }), 202);

  afterEach(() => expect(receiver.rejected()).toEqual([]));

  it('registers, lists and deletes endpoints; the secret is a Standard Webhooks one, shown once', async () => {
    const c = reader();
    const created = await c.req('POST', '/v1/webhooks', { url: receiver.url('/listed'), events: ['turn.ended'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      url: receiver.url('/listed'),
      events: ['turn.ended'],
      disabledAt: null,
      pendingDeliveries: 0,
    });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    const listed = await endpointsOf(c);
    expect(listed).toEqual([expect.objectContaining({ id: created.body.id })]);
    expect(listed[0].secret).toBeUndefined();
    // another reader sees none of them, and cannot delete them
    const other = reader();
    expect(await endpointsOf(other)).toEqual([]);
    expect((await other.req('DELETE', `/v1/webhooks/${created.body.id}`)).body.code).toBe('webhook_not_found');
    expect((await c.req('DELETE', `/v1/webhooks/${created.body.id}`)).status).toBe(204);
    expect(await endpointsOf(c)).toEqual([]);
  });

  it.each([
    [{ url: 'https://example.com/hook', events: [] }],
    [{ url: 'https://example.com/hook', events: ['turn.started'] }],
    [{ url: 'https://example.com/hook', events: ['turn.ended', 'turn.ended'] }],
    [{ url: 42, events: ['turn.ended'] }],
    [{ events: ['turn.ended'] }],
    [{ url: 'https://example.com/hook', events: ['turn.ended'], secret: 'whsec_mine' }],
  ])('refuses a malformed registration %j with 400 validation_failed', async (body) => {
    const c = reader();
    const r = await c.req('POST', '/v1/webhooks', body);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
    expect(await endpointsOf(c)).toEqual([]);
  });

  it("delivers each turn's end, signed, as {type, timestamp, data} naming the conversation, the turn and how it ended", async () => {
    await register(s.alice, receiver, '/alice', ['turn.ended']);
    const id = await conversationOf(s.alice, s.bookId);
    const turns = [(await post(s.alice, id, 'Who came home?')).turnId];
    turns.push((await post(s.alice, id, 'And the lamp?')).turnId);
    const got = await waitFor('both turns delivered', async () => {
      const ended = receiver.received('/alice').filter((r) => r.body.data.conversationId === id);
      return turns.every((t) => ended.some((r) => r.body.data.turnId === t)) ? ended : undefined;
    });
    const events = expectOk(await s.alice.api.GET('/v1/conversations/{id}/events', { params: { path: { id } } })).items;
    for (const turnId of turns) {
      const replied = events.find((e: any) => e.type === 'AssistantReplied' && e.data.turnId === turnId)!;
      const delivery = got.find((r) => r.body.data.turnId === turnId)!;
      expect(delivery.id).toBe(`msg_${replied.id}`);
      expect(delivery.body).toEqual({
        type: 'turn.ended',
        timestamp: replied.occurredAt,
        data: {
          conversationId: id,
          turnId,
          status: 'replied',
          messageId: replied.data.messageId,
          version: replied.version,
        },
      });
      expect(Math.abs(Number(delivery.timestamp) - Date.now() / 1000)).toBeLessThan(60);
    }
  });

  it('tells a cancelled turn as status cancelled', async () => {
    const c = reader();
    await register(c, receiver, '/cancel', ['turn.ended']);
    const book = (await newBook(c)).id;
    const id = await conversationOf(c, book);
    const { turnId } = await post(c, id, 'Who?');
    await c.req('POST', `/v1/conversations/${id}/turns/${turnId}/cancel`);
    const [delivery] = await waitFor('the turn delivered', async () => {
      const got = receiver.received('/cancel').filter((r) => r.body.data.turnId === turnId);
      return got.length ? got : undefined;
    });
    // cancelled before it answered, or answered before the cancel arrived: either is how it ended
    expect(['cancelled', 'replied']).toContain(delivery.body.data.status);
  });

  it('delivers batch.completed and book.ready to the endpoints that asked for them, and only those kinds', async () => {
    const c = reader();
    await register(c, receiver, '/batches', ['batch.completed']);
    await register(c, receiver, '/books', ['book.ready']);
    const book = await newBook(c);
    const id = await conversationOf(c, book.id);
    const { batchId } = expectOk(
      await c.api.POST('/v1/conversations/{id}/batches', {
        params: { path: { id } },
        body: { prompts: ['One?', 'Two?'], mode: 'sequential', via: 'messages' },
      }),
      202,
    );
    const [batch] = await waitFor('batch.completed', async () => {
      const got = receiver.received('/batches');
      return got.length ? got : undefined;
    });
    expect(batch.body).toMatchObject({
      type: 'batch.completed',
      data: { conversationId: id, batchId, answered: 2, failures: 0 },
    });
    const [ready] = await waitFor('book.ready', async () => {
      const got = receiver.received('/books');
      return got.length ? got : undefined;
    });
    expect(ready.body).toMatchObject({ type: 'book.ready', data: { bookId: book.id, title: book.title } });
    expect(ready.id).toMatch(/^msg_[0-9a-f-]{36}$/);
    expect(receiver.received('/batches').every((r) => r.body.type === 'batch.completed')).toBe(true);
    expect(receiver.received('/books').every((r) => r.body.type === 'book.ready')).toBe(true);
  });

  it("never delivers another reader's conversations", async () => {
    const bob = reader();
    await register(bob, receiver, '/bob', ['turn.ended']);
    const carol = reader();
    await register(carol, receiver, '/carol', ['turn.ended']);
    const bobBook = (await newBook(bob)).id;
    const bobs = await conversationOf(bob, bobBook);
    const { turnId } = await post(bob, bobs, 'Who?');
    const [ended] = await waitFor("bob's turn delivered to bob", async () => {
      const got = receiver.received('/bob').filter((r) => r.body.data.turnId === turnId);
      return got.length ? got : undefined;
    });
    // bob's fork is bob's: its own turns reach bob, the copied history is not told again
    const fork = expectOk(
      await bob.api.POST('/v1/conversations/{id}/fork', {
        params: { path: { id: bobs } },
        body: { version: ended.body.data.version },
      }),
      201,
    );
    const forked = await post(bob, fork.id, 'And in the fork?');
    await waitFor("the fork's turn delivered", async () =>
      receiver.received('/bob').some((r) => r.body.data.turnId === forked.turnId),
    );
    expect(receiver.received('/bob').filter((r) => r.body.data.conversationId === fork.id)).toHaveLength(1);
    expect(receiver.received('/carol')).toEqual([]);
  });

  it('retries a failing receiver with the same webhook-id until it answers 2xx', async () => {
    const c = reader();
    // the first two tries fail (500, then 503), the third is taken
    await register(c, receiver, '/flaky', ['turn.ended'], ({ attempt }) =>
      attempt === 1 ? 500 : attempt === 2 ? 503 : 200,
    );
    const book = (await newBook(c)).id;
    const id = await conversationOf(c, book);
    const { turnId } = await post(c, id, 'Who?');
    const tries = await waitFor('the third try taken', async () => {
      const got = receiver.received('/flaky').filter((r) => r.body.data.turnId === turnId);
      return got.some((r) => r.status === 200) ? got : undefined;
    });
    expect(tries.map((t) => t.status)).toEqual([500, 503, 200]);
    expect(new Set(tries.map((t) => t.id)).size).toBe(1);
    await waitFor('no delivery pending', async () => (await endpointsOf(c))[0].pendingDeliveries === 0);
    expect((await endpointsOf(c))[0].disabledAt).toBeNull();
  });

  it('disables an endpoint whose delivery failed every try, shows why, and sends it nothing more', async () => {
    const c = reader();
    await register(c, receiver, '/down', ['turn.ended'], () => 500);
    const book = (await newBook(c)).id;
    const id = await conversationOf(c, book);
    const { turnId } = await post(c, id, 'Who?');
    const [endpoint] = await waitFor('the endpoint disabled', async () => {
      const list = await endpointsOf(c);
      return list[0]?.disabledAt ? list : undefined;
    });
    expect(endpoint.disabledReason).toMatch(/failed 3 times; last: HTTP 500/);
    expect(receiver.received('/down').filter((r) => r.body.data.turnId === turnId)).toHaveLength(3);
    await post(c, id, 'Anyone there?');
    await new Promise((r) => setTimeout(r, 1_500)); // what it would have been sent in this time: nothing
    expect(receiver.received('/down')).toHaveLength(3);
  });

  it("erasing a conversation, a book or the account removes their pending deliveries (and the account's endpoints)", async () => {
    const c = reader();
    // a receiver that never answers: each delivery stays pending, its first try running (10 s timeout)
    await register(c, receiver, '/pending', ['turn.ended', 'book.ready'], () => 'hang');
    const book = (await newBook(c)).id;
    const id = await conversationOf(c, book);
    await post(c, id, 'Who?');
    const pending = () => endpointsOf(c).then((l) => l[0].pendingDeliveries as number);
    await waitFor('the turn and the book pending', async () => (await pending()) === 2);

    expect((await c.req('DELETE', `/v1/conversations/${id}`)).status).toBe(204);
    expect(await pending()).toBe(1);
    expect((await c.req('DELETE', `/v1/books/${book}`)).status).toBe(204);
    expect(await pending()).toBe(0);

    const kept = await conversationOf(c, (await newBook(c)).id);
    await post(c, kept, 'Who?');
    const logSoFar = s.stack.apis.map((a) => a.output().length);
    // 503 is the API's "the database is busy, try again" (a loaded CI run once saw one here): a
    // client tries again, and the erasure, idempotent, finishes; anything else is the answer
    let erased = await c.req('DELETE', '/v1/me');
    const answers = [`${erased.status} ${JSON.stringify(erased.body)}`];
    for (let tries = 1; erased.status === 503 && tries < 3; tries++) {
      await new Promise((r) => setTimeout(r, 1_000));
      erased = await c.req('DELETE', '/v1/me');
      answers.push(`${erased.status} ${JSON.stringify(erased.body)}`);
    }
    // on a failure, what the API logged of it says why (its problem body says only "internal error")
    const logged = s.stack.apis.flatMap((a, i) =>
      a
        .output()
        .slice(logSoFar[i])
        .split('\n')
        .filter((l) => /ERROR/.test(l)),
    );
    expect({ erased: [202, 204].includes(erased.status), answers, logged }).toEqual({
      erased: true,
      answers: expect.any(Array),
      logged: [],
    });
    if (answers.length > 1) console.log(`DELETE /v1/me answered ${answers.join(', then ')}`);
    expect(await endpointsOf(c)).toEqual([]);
  });
});

describe('webhook URLs a server without WEBHOOKS_ALLOW_PRIVATE_URLS refuses (e2e)', () => {
  const s = useFakeStack({ workers: 0 });

  it.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[::127.0.0.1]/hook',
    'http://[::ffff:0:127.0.0.1]/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://10.1.2.3/hook',
    'http://172.16.0.1/hook',
    'http://192.168.1.1/hook',
    'http://100.64.0.1/hook',
    'http://[fd00::1]/hook',
    'http://[fe80::1]/hook',
    'http://0.0.0.0/hook',
    'http://2130706433/hook',
    'ftp://example.com/hook',
    'https://user:pass@example.com/hook',
    'not a url',
    'http://no-such-host.invalid/hook',
  ])('refuses %s with 400 webhook_url_refused, registering nothing', async (url) => {
    const c = clientFor(s.stack.base, `reader-${randomUUID()}`);
    const r = await c.req('POST', '/v1/webhooks', { url, events: ['turn.ended'] });
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(r.body.code).toBe('webhook_url_refused');
    expect((await c.req('GET', '/v1/webhooks')).body.items).toEqual([]);
  });

  it.each([
    ['http://localhost/hook', 'localhost leads to '],
    ['http://no-such-host.invalid/hook', 'no-such-host.invalid does not resolve (ENOTFOUND)'],
  ])(
    'says of %s only that it is not public, in the same words either way; what the resolver said goes to the log',
    async (url, logged) => {
      const logSoFar = s.stack.apis.map((a) => a.output().length);
      const c = clientFor(s.stack.base, `reader-${randomUUID()}`);
      const r = await c.req('POST', '/v1/webhooks', { url, events: ['turn.ended'] });
      expect(r.body).toMatchObject({
        code: 'webhook_url_refused',
        detail: 'url: its host is not a public address, or does not resolve to one',
      });
      expect(JSON.stringify(r.body)).not.toMatch(/127\.0\.0\.1|ENOTFOUND|resolve \(/);
      await waitFor('the refusal logged with what the resolver said', async () =>
        s.stack.apis.some((a, i) => a.output().slice(logSoFar[i]).includes(logged)),
      );
    },
  );
});
