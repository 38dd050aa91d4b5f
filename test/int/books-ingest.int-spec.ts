import { randomUUID } from 'node:crypto';
import {
  Book,
  BookIngest,
  BookQueries,
  BookSearch,
  BookShelf,
  BooksRepository,
  readerOf,
  PassagesRepository,
} from '@parley/books';
import { EventStore } from '@parley/event-store';
import { honestBook } from '../support/hostile-books';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { waitFor } from '../support/wait-for';

describe('book ingest', () => {
  let db: TestDatabase;
  let store: EventStore;
  let ingest: BookIngest;
  let books: BookQueries;
  let bookSearch: BookSearch;
  const count = async (sql: string, params: unknown[]) =>
    (await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params)).rows[0].n;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
    const repo = new BooksRepository(db.pool);
    ingest = new BookIngest(repo);
    books = new BookQueries(new BookShelf(db.pool));
    bookSearch = new BookSearch(new PassagesRepository(db.pool), new BookShelf(db.pool));
  });
  afterAll(() => db.drop());

  it('does not hold back the tailers of the event log while a large book is stored', async () => {
    const owner = `big-${randomUUID()}`;
    let ingested: Book | null = null;
    const ingesting = ingest
      .ingest(owner, { title: 'Big', format: 'text', content: honestBook(6) })
      .then((b) => (ingested = b));
    // parsing runs in a child process; then chunks are written batch by batch
    await waitFor(
      'the ingest to start writing chunks',
      async () => (await count('book_chunks c JOIN books b ON b.id = c.book_id WHERE b.owner_id = $1', [owner])) > 0,
      60_000,
      5,
    );

    // meanwhile the book is listed as ingesting, and not searchable
    const [listed] = (await books.list(readerOf(owner), { limit: 100 })).items;
    expect(listed.status).toBe('ingesting');
    await expect(bookSearch.search(readerOf(owner), listed.id, 'kalo')).rejects.toThrow('still being ingested');
    const { events } = await store.append(`s-${randomUUID()}`, [{ id: randomUUID(), type: 'Meanwhile', data: {} }], {
      expectedVersion: 'no_stream',
    });
    const appended = events[0].id;
    await waitFor(
      'the tailer to read the event',
      async () => (await store.readAll({ limit: 10_000 })).some((e) => e.id === appended),
      60_000,
      20,
    );
    expect(ingested).toBeNull(); // served while the book was still being stored

    const book = await ingesting;
    expect(book.chapters).toHaveLength(60);
    expect((await books.list(readerOf(owner), { limit: 100 })).items.map((b) => b.id)).toEqual([book.id]);
    expect(await count('book_chunks WHERE book_id = $1', [book.id])).toBe(book.chunkCount);
    // the vocabulary added batch by batch is the book's: each word with the chunks it occurs in
    const wrongTerms = await count(
      `(SELECT u.lexeme, count(*)::int AS ndoc
          FROM book_chunks c CROSS JOIN LATERAL unnest(tsvector_to_array(c.tsv)) AS u(lexeme)
         WHERE c.book_id = $1 GROUP BY u.lexeme) expected
       FULL JOIN (SELECT lexeme, ndoc FROM book_terms WHERE book_id = $1) t USING (lexeme)
       WHERE t.ndoc IS DISTINCT FROM expected.ndoc`,
      [book.id],
    );
    expect(wrongTerms).toBe(0);
    expect(await count('book_terms WHERE book_id = $1', [book.id])).toBeGreaterThan(1000);
    const { rows } = await db.pool.query('SELECT text FROM book_chunks WHERE book_id = $1 AND ordinal = 100', [
      book.id,
    ]);
    const { items } = await bookSearch.search(readerOf(owner), book.id, rows[0].text.split(' ').slice(0, 4).join(' '));
    expect(items.length).toBeGreaterThan(0);
  }, 120_000);

  it('deletes what it stored when storing fails half-way, and an ingest abandoned long ago', async () => {
    const owner = `half-${randomUUID()}`;
    const abandoned = await new BooksRepository(db.pool).create(
      { ownerId: owner, title: 'Abandoned', author: null, format: 'text' },
      Buffer.from('x'),
      null,
    );
    await db.pool.query(`UPDATE books SET created_at = now() - interval '2 hours' WHERE id = $1`, [abandoned.id]);
    const before = await count('book_chunks', []);

    class FailingOnThirdBatch extends BooksRepository {
      private batches = 0;
      override async addChunks(...args: Parameters<BooksRepository['addChunks']>) {
        if (++this.batches === 3) throw new Error('disk full');
        return super.addChunks(...args);
      }
    }
    const failing = new BookIngest(new FailingOnThirdBatch(db.pool));
    await expect(failing.ingest(owner, { title: 'Half', format: 'text', content: honestBook(1) })).rejects.toThrow(
      'disk full',
    );
    expect(await count('books WHERE owner_id = $1', [owner])).toBe(0);
    expect(await count('book_chunks', [])).toBe(before);
    expect(await count('book_terms t WHERE NOT EXISTS (SELECT 1 FROM books b WHERE b.id = t.book_id)', [])).toBe(0);
  });
});
