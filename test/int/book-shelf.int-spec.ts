import { randomUUID } from 'node:crypto';
import {
  Book,
  BookIngest,
  BookShelf,
  BooksRepository,
  DEPLOYMENT_CATALOGUE,
  readerOf,
  turnReader,
} from '@parley/books';
import { conversationStreamId } from '@parley/conversation';
import { Erasures } from '@parley/erasure';
import { EventStore } from '@parley/event-store';
import { encodeCursor, InvalidCursorError } from '@parley/read-models';
import { conversationStarted, givenConversation } from '../support/factories/events';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const tale = (word: string) => `# One\n\nA tale of a ${word}.\n\n# Two\n\nThe end.`;

/** Which books a reader sees (their own, their tenant's catalogue), a page at a time, and what erasures do to each kind. */
describe('the book shelf (in process, real Postgres)', () => {
  let db: TestDatabase;
  let shelf: BookShelf;
  let ingest: BookIngest;
  let erasures: Erasures;
  let store: EventStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    const repo = new BooksRepository(db.pool);
    shelf = new BookShelf(db.pool);
    ingest = new BookIngest(repo);
    store = new EventStore(db.pool);
    erasures = Erasures.on(db.pool);
  });
  afterAll(() => db.drop());

  const publish = async (publisher: string, catalogue: string, title = 'Catalogue book'): Promise<Book> => {
    const accepted = await ingest.accept(publisher, { title, format: 'markdown', content: tale('hat') }, null, {
      catalogue,
    });
    return (await ingest.process(accepted.id))!;
  };
  const own = (owner: string, title = 'Own book') =>
    ingest.ingest(owner, { title, format: 'markdown', content: tale('hat') });
  const everything = async (
    reader: ReturnType<typeof readerOf>,
    limit: number,
    visibility?: 'private' | 'catalogue',
  ) => {
    const seen: Book[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const page = await shelf.page(reader, { limit, cursor, visibility });
      expect(page.items.length).toBeLessThanOrEqual(limit);
      seen.push(...page.items);
      if (!page.nextCursor) return seen;
      cursor = page.nextCursor;
    }
    throw new Error('more than 100 pages');
  };

  it("pages through a reader's own books and their tenant's catalogue together, newest first, each once", async () => {
    const tenant = `t-${randomUUID()}`;
    const reader = readerOf(`reader-${randomUUID()}`, tenant);
    const books: Book[] = [];
    for (let i = 0; i < 7; i++)
      books.push(i % 2 ? await own(reader.id, `own ${i}`) : await publish(`pub-${randomUUID()}`, tenant, `cat ${i}`));
    await publish(`pub-${randomUUID()}`, `${tenant}-elsewhere`);
    await own(`someone-${randomUUID()}`);

    const newestFirst = [...books].reverse().map((b) => b.id);
    for (const limit of [1, 2, 3, 100]) expect((await everything(reader, limit)).map((b) => b.id)).toEqual(newestFirst);
    const catalogue = await everything(reader, 2, 'catalogue');
    expect(catalogue.map((b) => b.visibility)).toEqual(['catalogue', 'catalogue', 'catalogue', 'catalogue']);
    const mine = await everything(reader, 2, 'private');
    expect(mine.map((b) => b.id)).toEqual(newestFirst.filter((id) => !catalogue.some((c) => c.id === id)));
    await expect(shelf.page(reader, { limit: 2, cursor: 'bm9wZQ' })).rejects.toBeInstanceOf(InvalidCursorError);
    // instants Date.parse takes but a page key never has, nor timestamptz holds (the fuzzer found the first: a 500)
    for (const instant of ['-148256-06-10T17:47:15.802Z', '+275760-01-01T00:00:00.000Z', '2026-02-30T10:00:00.000000Z'])
      await expect(
        shelf.page(reader, { limit: 2, cursor: encodeCursor([instant, randomUUID()]) }),
      ).rejects.toBeInstanceOf(InvalidCursorError);
    // the key a page hands out is taken back
    const first = await shelf.page(reader, { limit: 1 });
    expect((await shelf.page(reader, { limit: 1, cursor: first.nextCursor! })).items).toHaveLength(1);
  });

  it('shows a catalogue book to its tenant only; a token without a tenant reads the deployment catalogue', async () => {
    const tenant = `t-${randomUUID()}`;
    const book = await publish(`pub-${randomUUID()}`, tenant);
    const house = await publish(`pub-${randomUUID()}`, DEPLOYMENT_CATALOGUE);
    const inside = readerOf(`r-${randomUUID()}`, tenant);
    const outside = readerOf(`r-${randomUUID()}`, `${tenant}-x`);
    const untenanted = readerOf(`r-${randomUUID()}`);
    expect((await shelf.find(inside, book.id))?.tenant).toBe(tenant);
    expect(await shelf.find(outside, book.id)).toBeNull();
    expect(await shelf.find(untenanted, book.id)).toBeNull();
    expect(await shelf.find(inside, house.id)).toBeNull();
    expect((await shelf.find(untenanted, house.id))?.book.id).toBe(house.id);
    expect((await shelf.titles(outside, [book.id, house.id])).map((t) => t.id)).toEqual([]);
    // a turn reads as its post's catalogue says: another tenant's book is not there for it
    expect(await shelf.find(turnReader({ userId: outside.id, catalogue: outside.catalogue }), book.id)).toBeNull();
    expect((await shelf.find(turnReader({ userId: inside.id, catalogue: tenant }), book.id))?.book.id).toBe(book.id);
    // a turn posted before 0.4 recorded no catalogue: its books were checked when they joined
    expect((await shelf.find(turnReader({ userId: outside.id, catalogue: null }), book.id))?.book.id).toBe(book.id);
  });

  it('reads a book stored by the release before (no visibility written) as its owner’s private book', async () => {
    const owner = `old-${randomUUID()}`;
    const { rows } = await db.pool.query<{ id: string }>(
      `INSERT INTO books (owner_id, title, format, chapters, chunk_count, avg_chunk_bytes, size_bytes, status)
       VALUES ($1, 'Old book', 'text', '[]', 0, 0, 10, 'ready') RETURNING id`,
      [owner],
    );
    const found = await shelf.find(readerOf(owner), rows[0].id);
    expect(found).toMatchObject({ book: { id: rows[0].id, visibility: 'private' }, ownerId: owner, tenant: null });
    expect(await shelf.find(readerOf(`else-${randomUUID()}`), rows[0].id)).toBeNull();
  });

  it("erases a publisher's account without its catalogue books, and a withdrawal without readers' conversations", async () => {
    const tenant = `t-${randomUUID()}`;
    const publisher = `pub-${randomUUID()}`;
    const published = await publish(publisher, tenant);
    const mine = await own(publisher);
    await erasures.account(publisher);
    expect(await shelf.find(readerOf(publisher), mine.id)).toBeNull();
    expect(await shelf.find(readerOf('anyone', tenant), published.id)).not.toBeNull();
    // the tenant's book keeps nothing of the erased account: not its id as owner
    const owners = await db.pool.query('SELECT owner_id FROM books WHERE id = $1', [published.id]);
    expect(owners.rows).toEqual([{ owner_id: '' }]);
    expect((await db.pool.query('SELECT 1 FROM books WHERE owner_id = $1', [publisher])).rows).toEqual([]);

    const readersConversation = randomUUID();
    await givenConversation(store, readersConversation, [
      conversationStarted({ ownerId: `reader-${randomUUID()}`, bookId: published.id }),
    ]);
    const withdrawn = await erasures.book(`other-publisher-${randomUUID()}`, published.id);
    expect(withdrawn).toEqual({ conversations: [], books: 1 });
    expect(await shelf.find(readerOf('anyone', tenant), published.id)).toBeNull();
    expect(await store.readStream(conversationStreamId(readersConversation))).toHaveLength(1);
    const { rows } = await db.pool.query(
      `SELECT subject, subject_id, completed_at IS NOT NULL AS done FROM erasures WHERE subject_id = $1`,
      [published.id],
    );
    expect(rows).toEqual([{ subject: 'book', subject_id: published.id, done: true }]);
  });
});
