/**
 * One reader's slow receivers do not stop another reader's webhooks (docs/webhooks.md, "Fair
 * delivery"): the real API and worker, a receiver that answers 200 and then writes a byte every
 * two seconds, never ending, on every endpoint one reader may have, and a plain receiver for
 * another reader. Each try ends at its deadline (a failure, retried later), the slow reader holds
 * no more than their share of the senders, and the other reader's delivery goes out at once.
 */
import { randomUUID } from 'node:crypto';
import { expectOk } from '../support/api';
import type { FakeReply } from '../support/fake-anthropic/fake-anthropic.server';
import { newBook } from '../support/factories/books';
import { Client, clientFor } from '../support/stack';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';
import { DRIP_EVERY_MS, startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';

const answer = (): FakeReply => ({ content: [{ type: 'text', text: 'Marisol relit the lamp.' }] });

const TIMEOUT_MS = 4_000;
const PER_ENDPOINT = 2;
const PER_READER = 8;
/** Endpoints one reader may have: the slow reader registers them all. */
const ENDPOINTS = 20;

describe('webhooks: one reader cannot hold every sender (e2e)', () => {
  let slow: WebhookReceiver;
  let plain: WebhookReceiver;
  beforeAll(async () => {
    [slow, plain] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
  });
  afterAll(() => Promise.all([slow?.close(), plain?.close()]));
  const s = useReaderStack({
    fake: { defaultResponder: answer },
    env: {
      WEBHOOKS_ALLOW_PRIVATE_URLS: 'true', // the receivers listen on loopback
      WEBHOOKS_TIMEOUT_MS: String(TIMEOUT_MS),
      // a failed try waits a minute: the slow reader's tries seen here are first tries
      WEBHOOKS_RETRY_BASE_MS: '60000',
      WEBHOOKS_IN_FLIGHT_PER_ENDPOINT: String(PER_ENDPOINT),
      WEBHOOKS_IN_FLIGHT_PER_READER: String(PER_READER),
    },
  });
  afterEach(() => expect([...slow.rejected(), ...plain.rejected()]).toEqual([]));

  const post = async (c: Client, id: string, content: string) =>
    expectOk(await c.api.POST('/v1/conversations/{id}/messages', { params: { path: { id } }, body: { content } }), 202);

  it("delivers another reader's webhook within seconds while a reader's 40 deliveries to 20 slow receivers are pending", async () => {
    // the other reader, ready beforehand: an endpoint on a plain receiver and a conversation
    const other = clientFor(s.stack.base, `reader-${randomUUID()}`);
    const hook = await other.req('POST', '/v1/webhooks', { url: plain.url('/other'), events: ['turn.ended'] });
    expect(hook.status).toBe(201);
    plain.expect('/other', hook.body.secret);
    const othersConversation = expectOk(
      await other.api.POST('/v1/conversations', { body: { bookId: (await newBook(other)).id } }),
      201,
    ).id;

    // the slow reader: every endpoint they may have on the dripping receiver, two turns each
    const paths = Array.from({ length: ENDPOINTS }, (_, i) => `/slow/${i}`);
    for (const path of paths) {
      const r = await s.alice.req('POST', '/v1/webhooks', { url: slow.url(path), events: ['turn.ended'] });
      expect(r.status).toBe(201);
      slow.expect(path, r.body.secret, () => 'drip');
    }
    const slowConversation = expectOk(
      await s.alice.api.POST('/v1/conversations', { body: { bookId: s.bookId } }),
      201,
    ).id;
    await post(s.alice, slowConversation, 'Who came home?');
    await post(s.alice, slowConversation, 'And the lamp?');

    // how many of the slow reader's tries are open at once, looked at as it goes
    let mostOpen = 0;
    let mostOnOneEndpoint = 0;
    const watch = setInterval(() => {
      mostOpen = Math.max(mostOpen, slow.open().length);
      mostOnOneEndpoint = Math.max(mostOnOneEndpoint, ...paths.map((p) => slow.open(p).length));
    }, 50);
    try {
      await waitFor(
        'the slow reader holding their share of the senders',
        () => slow.open().length >= PER_READER,
        60_000,
      );

      const posted = Date.now();
      const { turnId } = await post(other, othersConversation, 'Who?');
      const delivered = await waitFor(
        "the other reader's delivery",
        () => plain.received('/other').find((r) => r.body.data.turnId === turnId),
        60_000,
      );
      const tookMs = Date.now() - posted;
      // before: it waited until the slow receivers let go (minutes); a loaded machine still takes seconds
      expect({ tookMs, underBound: tookMs < 15_000 }).toEqual({ tookMs, underBound: true });
      expect(delivered.status).toBe(204);

      // the slow reader's deliveries are still there, waiting for their tries
      const pending = (await s.alice.req('GET', '/v1/webhooks')).body.items.reduce(
        (sum: number, e: { pendingDeliveries: number }) => sum + e.pendingDeliveries,
        0,
      );
      expect(pending).toBeGreaterThan(PER_READER);

      // each try ended at its deadline though the receiver never went silent: a failure, retried later
      const ended = await waitFor(
        'the first tries cut off',
        () => {
          const cut = slow.received().filter((r) => r.closedAfterMs !== undefined);
          return cut.length >= PER_READER ? cut : undefined;
        },
        60_000,
      );
      for (const { closedAfterMs } of ended) {
        expect(closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS / 2); // its own request and connection came first
        expect(closedAfterMs).toBeLessThan(TIMEOUT_MS + 3 * DRIP_EVERY_MS);
      }
      // the worker records each failure just after it closed the connection
      const failures = () =>
        s.stack.db.pool
          .query<{ last_error: string; retry_in_s: number }>(
            `SELECT d.last_error, extract(epoch FROM d.next_attempt_at - now())::float AS retry_in_s
               FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
              WHERE e.owner_id = (SELECT owner_id FROM webhook_endpoints WHERE url = $1) AND d.last_error IS NOT NULL`,
            [slow.url(paths[0])],
          )
          .then((r) => r.rows);
      const rows = await waitFor('the cut-off tries recorded as failures', async () => {
        const recorded = await failures();
        return recorded.length >= ended.length ? recorded : undefined;
      });
      for (const row of rows) {
        expect(row.last_error).toBe(`no complete answer within ${TIMEOUT_MS} ms`);
        expect(row.retry_in_s).toBeGreaterThan(20); // a minute's pause, ±20 %, minus the time since
      }
    } finally {
      clearInterval(watch);
    }
    expect(mostOpen).toBeLessThanOrEqual(PER_READER);
    expect(mostOnOneEndpoint).toBeLessThanOrEqual(PER_ENDPOINT);
  }, 180_000);
});
