import { createHash, randomUUID } from 'node:crypto';
import { CheckpointedConsumerRunner, EventStore, inTransaction, reached } from '@parley/event-store';
import {
  DueDelivery,
  InFlightCaps,
  WebhookDeliveriesConsumer,
  WebhookEndpoints,
  WebhookKind,
  WebhookOutbox,
  WEBHOOKS_CONSUMER,
} from '@parley/webhooks';
import {
  assistantReplied,
  conversationStarted,
  givenConversation,
  turnCancelled,
  turnFailed,
  userMessagePosted,
} from '../support/factories/events';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { waitFor } from '../support/wait-for';

/**
 * The webhook outbox written from the log (migration 027): a delivery per turn's end for the
 * owner's endpoints, none twice when the log is read again, none for a fork's copied history, an
 * endpoint registered later, a disabled one or another reader's; and gone with an erasure.
 */
describe(WebhookOutbox.name, () => {
  let db: TestDatabase;
  let store: EventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
  });
  afterAll(() => db.drop());

  const endpointFor = async (ownerId: string, events: WebhookKind[] = ['turn.ended']) =>
    (await new WebhookEndpoints(db.pool).create(
      ownerId,
      { url: 'https://hooks.example.com/', events, secret: 'whsec_x' },
      20,
    ))!;
  const deliveriesOf = async (endpointId: string) =>
    (
      await db.pool.query<{ message_id: string; payload: any; attempts: number }>(
        'SELECT message_id, payload, attempts FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id',
        [endpointId],
      )
    ).rows;
  /**
   * Runs the consumer until it has reached the log's head as it is now: one drain can stop short
   * while another database's transaction on this cluster is still open (the consumer waits for
   * older transactions, so it never skips one), as happens beside the other suites.
   */
  const drain = async (of: EventStore = store) => {
    const runner = new CheckpointedConsumerRunner(of, new WebhookDeliveriesConsumer());
    const head = await of.head();
    await waitFor('the webhooks consumer to reach the log head', async () => {
      await runner.drain();
      return reached(await runner.checkpoint(), head);
    });
  };

  /** A sender's take, as the worker does it: in a transaction, at most `caps` in flight (else no cap to speak of). */
  const take = (limit: number, leaseMs: number, caps: InFlightCaps = { perEndpoint: 1000, perReader: 1000 }) =>
    inTransaction(db.pool, (tx) => new WebhookOutbox(tx).takeDue(limit, leaseMs, caps));

  /** A conversation of `ownerId` with turns ended each way: replied, failed, cancelled. */
  async function conversationWithTurns(ownerId: string) {
    const id = randomUUID();
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const appended = await givenConversation(store, id, [
      conversationStarted({ ownerId }),
      userMessagePosted({ content: 'one', turnId: a }),
      assistantReplied({ turnId: a, content: 'answer' }),
      userMessagePosted({ content: 'two', turnId: b }),
      turnFailed({ turnId: b }),
      userMessagePosted({ content: 'three', turnId: c }),
      turnCancelled(c),
    ]);
    return { id, turns: [a, b, c], events: appended.events };
  }

  it("writes one delivery per turn's end, once however often the log is read", async () => {
    const owner = `reader-${randomUUID()}`;
    const endpoint = await endpointFor(owner);
    const other = await endpointFor(`reader-${randomUUID()}`);
    const { id, turns, events } = await conversationWithTurns(owner);
    await drain();
    const got = await deliveriesOf(endpoint.id);
    expect(got.map((d) => d.payload.data)).toEqual([
      expect.objectContaining({ conversationId: id, turnId: turns[0], status: 'replied', version: 3 }),
      expect.objectContaining({
        turnId: turns[1],
        status: 'failed',
        error: { code: 'llm_error', message: 'the model failed', retryable: false },
      }),
      expect.objectContaining({ turnId: turns[2], status: 'cancelled', version: 7 }),
    ]);
    expect(got.map((d) => d.message_id)).toEqual([2, 4, 6].map((i) => `msg_${events[i].id}`));
    expect(await deliveriesOf(other.id)).toEqual([]);

    // the checkpoint lost: the whole log read again writes nothing more
    await db.pool.query(`DELETE FROM consumer_checkpoints WHERE consumer = $1`, [WEBHOOKS_CONSUMER]);
    await drain();
    expect(await deliveriesOf(endpoint.id)).toHaveLength(3);
  });

  it("tells a fork's own turns, not the history it copied", async () => {
    const owner = `reader-${randomUUID()}`;
    const endpoint = await endpointFor(owner);
    const source = await conversationWithTurns(owner);
    await drain();
    const forkId = randomUUID();
    const forkedTurn = randomUUID();
    // a fork's stream as forkEvents writes it: the start naming its source and the copies, in one append
    await givenConversation(store, forkId, [
      conversationStarted({ ownerId: owner, forkedFrom: { conversationId: source.id, version: 7 } }),
      ...source.events.slice(1).map((e) => ({ ...e, id: randomUUID(), metadata: { causationId: e.id } }) as any),
    ]);
    await givenConversation(
      store,
      forkId,
      [
        userMessagePosted({ content: 'four', turnId: forkedTurn }),
        assistantReplied({ turnId: forkedTurn, content: 'x' }),
      ],
      7,
    );
    await drain();
    const ofFork = (await deliveriesOf(endpoint.id)).filter((d) => d.payload.data.conversationId === forkId);
    expect(ofFork.map((d) => d.payload.data.turnId)).toEqual([forkedTurn]);
  });

  it('writes nothing for an endpoint registered after the event, or disabled', async () => {
    const owner = `reader-${randomUUID()}`;
    await conversationWithTurns(owner);
    const late = await endpointFor(owner);
    await drain();
    expect(await deliveriesOf(late.id)).toEqual([]);
    await db.pool.query('UPDATE webhook_endpoints SET disabled_at = now() WHERE id = $1', [late.id]);
    await conversationWithTurns(owner);
    await drain();
    expect(await deliveriesOf(late.id)).toEqual([]);
  });

  it('hands each due delivery to one sender at a time, and backs off', async () => {
    const owner = `reader-${randomUUID()}`;
    const endpoint = await endpointFor(owner);
    await conversationWithTurns(owner);
    await drain();
    const outbox = new WebhookOutbox(db.pool);
    const [first, second] = await Promise.all([take(1000, 60_000), take(1000, 60_000)]);
    const mine = [...first, ...second].filter((d) => d.endpointId === endpoint.id);
    expect(mine).toHaveLength(3);
    expect(new Set(mine.map((d) => d.id)).size).toBe(3);
    expect(mine.every((d) => d.attempt === 1)).toBe(true);
    // leased: taken again only once the lease (or a retry's pause) is over
    expect((await take(1000, 60_000)).filter((d) => d.endpointId === endpoint.id)).toEqual([]);
    await outbox.retryLater(mine[0].id, 'HTTP 500', 0);
    await outbox.delivered(mine[1].id);
    const again = (await take(1000, 60_000)).filter((d) => d.endpointId === endpoint.id);
    expect(again.map((d) => [d.id, d.attempt])).toEqual([[mine[0].id, 2]]);
    await outbox.giveUp(again[0], 'HTTP 500');
    const [listed] = await new WebhookEndpoints(db.pool).list(owner);
    expect(listed.disabledReason).toMatch(/failed 2 times; last: HTTP 500/);
    expect(listed.pendingDeliveries).toBe(2);
  });

  it('says whether a look could find anything: a delivery due, or a book made ready to tell', async () => {
    const own = await createTestDatabase(); // nothing of the other tests' deliveries
    try {
      const outbox = new WebhookOutbox(own.pool);
      expect(await outbox.anythingDue()).toBe(false);
      const owner = `reader-${randomUUID()}`;
      await new WebhookEndpoints(own.pool).create(
        owner,
        { url: 'https://hooks.example.com/', events: ['turn.ended'], secret: 'whsec_x' },
        20,
      );
      const ownStore = new EventStore(own.pool);
      const turnId = randomUUID();
      await givenConversation(ownStore, randomUUID(), [
        conversationStarted({ ownerId: owner }),
        userMessagePosted({ content: 'one', turnId }),
        assistantReplied({ turnId, content: 'answer' }),
      ]);
      await drain(ownStore);
      expect(await outbox.anythingDue()).toBe(true);
      const taken = await inTransaction(own.pool, (tx) =>
        new WebhookOutbox(tx).takeDue(10, 60_000, { perEndpoint: 10, perReader: 10 }),
      );
      expect(taken).toHaveLength(1);
      expect(await outbox.anythingDue()).toBe(false); // leased: not due until its lease ends
      await outbox.retryLater(taken[0].id, 'HTTP 500', 0);
      expect(await outbox.anythingDue()).toBe(true);
      await outbox.giveUp({ ...taken[0], attempt: 2 }, 'HTTP 500'); // its endpoint disabled: nothing to send
      expect(await outbox.anythingDue()).toBe(false);
      const [{ id: bookId }] = (
        await own.pool.query<{ id: string }>(
          `INSERT INTO books (owner_id, title, format, chapters, chunk_count, avg_chunk_bytes, size_bytes, status)
           VALUES ($1, 'A book', 'text', '[]', 0, 0, 10, 'ingesting') RETURNING id`,
          [owner],
        )
      ).rows;
      await own.pool.query('INSERT INTO webhook_books_ready (book_id, ready_at) VALUES ($1, now())', [bookId]);
      expect(await outbox.anythingDue()).toBe(true);
    } finally {
      await own.drop();
    }
  });

  it("takes no more than an endpoint's and a reader's share in flight, skipping them for other readers' deliveries", async () => {
    const caps = { perEndpoint: 2, perReader: 3 };
    const slow = `reader-${randomUUID()}`;
    const slowEndpoints = [await endpointFor(slow), await endpointFor(slow), await endpointFor(slow)];
    await conversationWithTurns(slow);
    await conversationWithTurns(slow); // 6 due deliveries per endpoint, 18 of the slow reader's
    await drain();
    const inFlight = (taken: DueDelivery[], endpoints: Array<{ id: string }>) =>
      taken.filter((d) => endpoints.some((e) => e.id === d.endpointId));
    const perEndpoint = (taken: DueDelivery[]) =>
      slowEndpoints.map((e) => taken.filter((d) => d.endpointId === e.id).length);

    // two senders at once: together still no more than the caps, spread over the reader's endpoints
    const [a, b] = await Promise.all([take(1000, 60_000, caps), take(1000, 60_000, caps)]);
    const first = inFlight([...a, ...b], slowEndpoints);
    expect(first).toHaveLength(3);
    expect(perEndpoint(first).sort()).toEqual([1, 1, 1]);

    // the slow reader at their cap: another reader's delivery is taken at once, theirs are skipped
    const other = `reader-${randomUUID()}`;
    const otherEndpoint = await endpointFor(other);
    await conversationWithTurns(other);
    await drain();
    const second = await take(1000, 60_000, caps);
    expect(inFlight(second, slowEndpoints)).toEqual([]);
    expect(inFlight(second, [otherEndpoint])).toHaveLength(2); // its endpoint's share of its 3

    // a try that ended (failed, to be retried later) frees its slot; a lease run out (its sender died) too
    const outbox = new WebhookOutbox(db.pool);
    await outbox.retryLater(first[0].id, 'no complete answer within 10000 ms', 60_000);
    const third = inFlight(await take(1000, 60_000, caps), slowEndpoints);
    expect(third).toHaveLength(1);
    expect(third[0].id).not.toBe(first[0].id);
    await db.pool.query(`UPDATE webhook_deliveries SET leased_until = now(), next_attempt_at = now() WHERE id = $1`, [
      third[0].id,
    ]);
    // the slot is free again, and the delivery due again (older ones go first)
    expect(inFlight(await take(1000, 60_000, caps), slowEndpoints)).toHaveLength(1);
  });

  describe('book.ready', () => {
    /** A book of the owner's, stored ingesting and then made ready, as BooksRepository does it. */
    const bookMadeReady = async (ownerId: string, title = 'The Keeper') => {
      const { rows } = await db.pool.query<{ id: string }>(
        `INSERT INTO books (owner_id, title, format, chapters, chunk_count, avg_chunk_bytes, size_bytes, status)
         VALUES ($1, $2, 'text', '[]', 0, 0, 10, 'ingesting') RETURNING id`,
        [ownerId, title],
      );
      await db.pool.query(`UPDATE books SET status = 'ready' WHERE id = $1`, [rows[0].id]);
      return rows[0].id;
    };
    const relay = () => inTransaction(db.pool, (tx) => new WebhookOutbox(tx).relayReadyBooks(100));
    const notes = async (bookId: string) =>
      (await db.pool.query('SELECT ready_at FROM webhook_books_ready WHERE book_id = $1', [bookId])).rows;
    /** The message migration 027's trigger built in SQL, for a book made ready at `readyAt`. */
    const asTheTriggerBuiltIt = async (bookId: string, title: string, readyAt: Date) =>
      (
        await db.pool.query<{ message_id: string; payload: string }>(
          `SELECT 'msg_' || md5('book.ready/' || $1::uuid::text)::uuid::text AS message_id,
                  jsonb_build_object(
                    'type', 'book.ready',
                    'timestamp', to_char($2::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                    'data', jsonb_build_object('bookId', $1::uuid, 'title', $3::text))::text AS payload`,
          [bookId, readyAt, title],
        )
      ).rows[0];

    it("is built in TypeScript exactly as migration 027's trigger built it: the same id, the same bytes", async () => {
      const owner = `reader-${randomUUID()}`;
      const endpoint = await endpointFor(owner, ['book.ready']);
      const title = 'Lamp "keeper" — ünïcode ✓';
      const bookId = await bookMadeReady(owner, title);
      // the statement that made it ready left a note, no delivery
      const [note] = await notes(bookId);
      expect(note.ready_at).toBeInstanceOf(Date);
      expect(await deliveriesOf(endpoint.id)).toEqual([]);

      expect(await relay()).toBe(1);
      const { rows } = await db.pool.query<{ message_id: string; type: string; payload: string; book_id: string }>(
        'SELECT message_id, type, payload::text AS payload, book_id FROM webhook_deliveries WHERE endpoint_id = $1',
        [endpoint.id],
      );
      expect(await notes(bookId)).toEqual([]); // the note went with its deliveries
      const old = await asTheTriggerBuiltIt(bookId, title, note.ready_at);
      expect(rows).toEqual([{ message_id: old.message_id, type: 'book.ready', payload: old.payload, book_id: bookId }]);
      expect(JSON.parse(rows[0].payload)).toEqual({
        type: 'book.ready',
        timestamp: note.ready_at.toISOString(),
        data: { bookId, title },
      });
      // and what a sender takes and signs is that message
      const [taken] = (await take(100, 60_000)).filter((d) => d.endpointId === endpoint.id);
      expect(taken).toMatchObject({ endpointId: endpoint.id, messageId: old.message_id });
      expect(JSON.stringify(taken.payload)).toBe(JSON.stringify(JSON.parse(old.payload)));
      await new WebhookOutbox(db.pool).delivered(taken.id);
      expect(await relay()).toBe(0); // told once
    });

    it('cuts the time to the millisecond as to_char did, whatever its microseconds', async () => {
      const owner = `reader-${randomUUID()}`;
      await endpointFor(owner, ['book.ready']);
      const bookId = await bookMadeReady(owner);
      for (const at of [
        '2026-03-01 12:00:00.999999+00',
        '2026-03-01 12:00:00.123000+00',
        '2026-03-01 12:00:00.0005+00',
      ]) {
        await db.pool.query('DELETE FROM webhook_deliveries WHERE book_id = $1', [bookId]);
        await db.pool.query(
          'INSERT INTO webhook_books_ready (book_id, ready_at) VALUES ($1, $2) ON CONFLICT (book_id) DO UPDATE SET ready_at = $2',
          [bookId, at],
        );
        await db.pool.query('UPDATE webhook_endpoints SET created_at = $2 WHERE owner_id = $1', [owner, '2026-01-01']);
        expect(await relay()).toBe(1);
        const { rows } = await db.pool.query<{ payload: string }>(
          'SELECT payload::text AS payload FROM webhook_deliveries WHERE book_id = $1',
          [bookId],
        );
        const old = (
          await db.pool.query<{ payload: string }>(
            `SELECT jsonb_build_object('type', 'book.ready',
                      'timestamp', to_char($1::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                      'data', jsonb_build_object('bookId', $2::uuid, 'title', 'The Keeper'))::text AS payload`,
            [at, bookId],
          )
        ).rows[0];
        expect([at, rows[0].payload]).toEqual([at, old.payload]);
      }
    });

    it('notes nothing for a reader without a book.ready endpoint, and tells no endpoint registered after', async () => {
      const quiet = `reader-${randomUUID()}`;
      await endpointFor(quiet, ['turn.ended']);
      expect(await notes(await bookMadeReady(quiet))).toEqual([]);

      const owner = `reader-${randomUUID()}`;
      const before = await endpointFor(owner, ['book.ready']);
      const bookId = await bookMadeReady(owner);
      const after = await endpointFor(owner, ['book.ready']);
      expect(await relay()).toBe(1);
      expect((await deliveriesOf(before.id)).map((d) => d.payload.data)).toEqual([{ bookId, title: 'The Keeper' }]);
      expect(await deliveriesOf(after.id)).toEqual([]);
    });

    it('still sends a delivery that the trigger of the release before queued, as it queued it', async () => {
      const owner = `reader-${randomUUID()}`;
      const endpoint = await endpointFor(owner, ['book.ready']);
      const { rows } = await db.pool.query<{ id: string }>(
        `INSERT INTO books (owner_id, title, format, chapters, chunk_count, avg_chunk_bytes, size_bytes, status)
         VALUES ($1, 'Queued before', 'text', '[]', 0, 0, 10, 'ready') RETURNING id`,
        [owner],
      );
      const bookId = rows[0].id;
      await db.pool.query('DELETE FROM webhook_books_ready WHERE book_id = $1', [bookId]); // not the new trigger's
      // the row migration 027's function wrote, payload and all
      await db.pool.query(
        `INSERT INTO webhook_deliveries (endpoint_id, message_id, type, payload, book_id)
         SELECT $1, 'msg_' || md5('book.ready/' || $2::text)::uuid::text, 'book.ready',
                jsonb_build_object('type', 'book.ready',
                  'timestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                  'data', jsonb_build_object('bookId', $2::uuid, 'title', 'Queued before')),
                $2::uuid`,
        [endpoint.id, bookId],
      );
      const taken = (await take(100, 60_000)).filter((d) => d.endpointId === endpoint.id);
      expect(taken).toEqual([
        expect.objectContaining({
          messageId: `msg_${createHash('md5')
            .update(`book.ready/${bookId}`)
            .digest('hex')
            .replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-')}`,
          payload: {
            type: 'book.ready',
            timestamp: expect.stringMatching(/Z$/),
            data: { bookId, title: 'Queued before' },
          },
        }),
      ]);
    });
  });
});
