import { randomUUID } from 'node:crypto';
import { BookIngest, BooksRepository } from '@parley/books';
import { AssistantReplied, Citation, conversationStreamId, ToolResultRecorded } from '@parley/conversation';
import { Erasures } from '@parley/erasure';
import { CheckpointedConsumerRunner, EventStore, StoredEvent } from '@parley/event-store';
import { ConversationsProjection } from '@parley/read-models';
import {
  assistantReplied,
  conversationStarted,
  givenConversation,
  toolInvoked,
  toolResultRecorded,
  userMessagePosted,
} from '../support/factories/events';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { waitFor } from '../support/wait-for';

const tale = `# One\n\nThe hatter kept a teapot of brass in the dormouse's cupboard.\n\n# Two\n\nThe queen's croquet lawn was laid with flamingos and hedgehogs.`;

/** The log keeps a book's passages by reference: joined when read, gone when the book is withdrawn, never updated. */
describe('passages by reference (in process, real Postgres)', () => {
  let db: TestDatabase;
  let store: EventStore;
  let ingest: BookIngest;
  let erasures: Erasures;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
    const repo = new BooksRepository(db.pool);
    ingest = new BookIngest(repo);
    erasures = Erasures.on(db.pool);
  });
  afterAll(() => db.drop());

  /** A catalogue book and its passages in reading order. */
  async function published(publisher = `pub-${randomUUID()}`) {
    const accepted = await ingest.accept(publisher, { title: 'Tea', format: 'markdown', content: tale }, null, {
      catalogue: `t-${randomUUID()}`,
    });
    const book = (await ingest.process(accepted.id))!;
    const { rows } = await db.pool.query<{ id: string; chapter: string; text: string }>(
      'SELECT id, chapter, text FROM book_chunks WHERE book_id = $1 ORDER BY ordinal',
      [book.id],
    );
    expect(rows).toHaveLength(2);
    return { book, publisher, passages: rows };
  }

  const citationOf = (p: { id: string; chapter: string }, extra: Partial<Citation> = {}): Citation => ({
    chunkId: p.id,
    chapter: p.chapter,
    section: null,
    page: null,
    score: 1,
    ...extra,
  });

  /** A turn that searched the book (by reference) and answered quoting the first passage (by reference). */
  async function conversationQuoting(passages: Array<{ id: string; chapter: string; text: string }>) {
    const id = randomUUID();
    const turnId = randomUUID();
    const call = toolInvoked({ turnId, name: 'search_book' });
    const parts: ToolResultRecorded['data']['contentParts'] = [
      '2 passages for "tea":',
      `\n\n[1] ${passages[0].chapter}\n`,
      { passage: passages[0].id },
      `\n\n[2] ${passages[1].chapter}\n`,
      { passage: passages[1].id },
    ];
    await givenConversation(store, id, [
      conversationStarted({ ownerId: `reader-${randomUUID()}` }),
      userMessagePosted({ content: 'What of the teapot?', turnId }),
      call,
      toolResultRecorded({
        turnId,
        toolUseId: call.data.toolUseId,
        content: parts.filter((p) => typeof p === 'string').join(''),
        contentParts: parts,
        chunks: passages.map((p) => citationOf(p)),
        citationStart: 1,
      }),
      assistantReplied({
        turnId,
        content: 'A teapot of brass [1].',
        citations: [citationOf(passages[0], { quoted: true })],
      }),
    ]);
    const joined = `2 passages for "tea":\n\n[1] ${passages[0].chapter}\n${passages[0].text}\n\n[2] ${passages[1].chapter}\n${passages[1].text}`;
    return { id, joined };
  }

  /** A turn as 0.3 stored it: the passages' text in the tool result and the answer's quote. */
  async function conversationOf03(passages: Array<{ id: string; chapter: string; text: string }>) {
    const id = randomUUID();
    const turnId = randomUUID();
    const call = toolInvoked({ turnId, name: 'search_book' });
    const content = `1 passage for "tea":\n\n[1] ${passages[0].chapter}\n${passages[0].text}`;
    await givenConversation(store, id, [
      conversationStarted({ ownerId: `reader-${randomUUID()}` }),
      userMessagePosted({ content: 'What of the teapot?', turnId }),
      call,
      toolResultRecorded({ turnId, toolUseId: call.data.toolUseId, content, chunks: [citationOf(passages[0])] }),
      assistantReplied({
        turnId,
        content: 'A teapot of brass [1].',
        citations: [citationOf(passages[0], { quote: passages[0].text })],
      }),
    ]);
    return { id, content };
  }

  const eventsOf = (id: string) => store.readStream(conversationStreamId(id));
  const result = (events: StoredEvent[]) =>
    events.find((e) => e.type === 'ToolResultRecorded')!.data as ToolResultRecorded['data'];
  const answer = (events: StoredEvent[]) =>
    events.find((e) => e.type === 'AssistantReplied')!.data as AssistantReplied['data'];
  const storedRows = async (id: string) =>
    (
      await db.pool.query<{ event_id: string; data: string; xmin: string }>(
        'SELECT event_id, data::text AS data, xmin::text AS xmin FROM events WHERE stream_id = $1 ORDER BY version',
        [conversationStreamId(id)],
      )
    ).rows;

  it('stores no book text, and every read of the log serves it joined, byte for byte', async () => {
    const { passages } = await published();
    const { id, joined } = await conversationQuoting(passages);
    for (const row of await storedRows(id)) for (const p of passages) expect(row.data).not.toContain(p.text);

    const read = await eventsOf(id);
    expect(result(read)).toEqual(expect.objectContaining({ content: joined }));
    expect(result(read)).not.toHaveProperty('contentParts');
    expect(answer(read).citations).toEqual([citationOf(passages[0], { quote: passages[0].text })]);
    // the tail (projections, webhooks) reads the same
    // (an open transaction of another suite may hold the tail's horizon back a while: it lags, never differs)
    const tail = await waitFor('the tail to reach the conversation', async () => {
      const of = (await store.readAll({ limit: 100_000 })).filter((e) => e.streamId === conversationStreamId(id));
      return of.length === read.length ? of : undefined;
    });
    expect(tail.map((e) => e.data)).toEqual(read.map((e) => e.data));
  });

  it('serves an event stored with its text (0.3) as it was stored', async () => {
    const { passages } = await published();
    const { id, content } = await conversationOf03(passages);
    const read = await eventsOf(id);
    expect(result(read).content).toBe(content);
    expect(answer(read).citations[0].quote).toBe(passages[0].text);
  });

  it("withdraws a book without updating an event: readers' conversations read the notice, are told once, and their read models follow", async () => {
    const { book, publisher, passages } = await published();
    const byReference = await conversationQuoting(passages);
    const of03 = await conversationOf03(passages);
    const projection = new CheckpointedConsumerRunner(store, new ConversationsProjection());
    const projected = (id: string) =>
      waitFor('the read model to show the turn', async () => {
        await projection.drain();
        const { rows } = await db.pool.query('SELECT 1 FROM messages WHERE conversation_id = $1', [id]);
        return rows.length >= 3;
      });
    await projected(byReference.id);
    await projected(of03.id);
    const messagesText = async (id: string) =>
      JSON.stringify(
        (await db.pool.query('SELECT content, citations FROM messages WHERE conversation_id = $1', [id])).rows,
      );
    expect(await messagesText(byReference.id)).toContain(passages[0].text);
    const before = [...(await storedRows(byReference.id)), ...(await storedRows(of03.id))];

    expect(await erasures.book(publisher, book.id)).toEqual({ conversations: [], books: 1 });

    // nothing stored was changed: the same rows, same data, same row versions
    const after = [...(await storedRows(byReference.id)), ...(await storedRows(of03.id))];
    const ids = new Set(before.map((r) => r.event_id));
    expect(after.filter((r) => ids.has(r.event_id))).toEqual(before);
    expect(after).toHaveLength(before.length + 2); // and one marker each
    const read = await eventsOf(byReference.id);
    expect(result(read).content).toBe(
      `2 passages for "tea":\n\n[1] ${passages[0].chapter}\n${NOTICE}\n\n[2] ${passages[1].chapter}\n${NOTICE}`,
    );
    expect(answer(read).citations).toEqual([citationOf(passages[0])]);
    const old = await eventsOf(of03.id);
    expect(result(old).content).toMatch(/^\[These passages came from a book its publisher has withdrawn/);
    expect(answer(old).citations).toEqual([citationOf(passages[0])]);
    for (const events of [read, old]) {
      expect(events.at(-1)).toMatchObject({ type: 'PassagesWithdrawn', data: { bookId: book.id, redactedEvents: 2 } });
      expect(events.filter((e) => e.type === 'PassagesWithdrawn')).toHaveLength(1);
    }
    for (const id of [byReference.id, of03.id]) {
      const text = await messagesText(id);
      for (const p of passages) expect(text).not.toContain(p.text);
    }
    const { rows } = await db.pool.query(
      'SELECT completed_at IS NOT NULL AS done FROM erasures WHERE subject_id = $1',
      [book.id],
    );
    expect(rows).toEqual([{ done: true }]);
    await projection.drain(); // and the projection reads the markers on
  });

  it('refuses every update of an event, whatever a session sets', async () => {
    const { passages } = await published();
    const { id } = await conversationQuoting(passages);
    const c = await db.pool.connect();
    try {
      await c.query('BEGIN');
      await c.query(`SELECT set_config('parley.redacting_events', 'on', true)`);
      await expect(
        c.query(`UPDATE events SET data = '{}' WHERE stream_id = $1`, [conversationStreamId(id)]),
      ).rejects.toThrow('append-only');
    } finally {
      await c.query('ROLLBACK');
      c.release();
    }
  });

  it('finishes a withdrawal a crash broke off: the sweep withdraws a catalogue book whose erasure was left open', async () => {
    const { book, publisher, passages } = await published();
    const { id } = await conversationQuoting(passages);
    // what a crash before the withdrawal's commit leaves: the record opened, the book still in the catalogue
    await db.pool.query(
      `INSERT INTO erasures (id, subject, subject_id, requested_by, requested_at)
       VALUES ($1, 'book', $2, $3, now() - interval '2 minutes')`,
      [randomUUID(), book.id, publisher],
    );
    expect((await erasures.sweep()).withdrawn).toBe(1);
    expect((await db.pool.query('SELECT 1 FROM books WHERE id = $1', [book.id])).rows).toEqual([]);
    expect((await eventsOf(id)).at(-1)).toMatchObject({ type: 'PassagesWithdrawn' });
    expect((await erasures.sweep()).withdrawn).toBe(0);
  });
});

const NOTICE = '[This passage came from a book its publisher has withdrawn: it is no longer available.]';
