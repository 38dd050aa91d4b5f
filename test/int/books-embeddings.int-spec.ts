import { randomUUID } from 'node:crypto';
import {
  BookEmbeddings,
  BookProgress,
  BookIngest,
  BookSearch,
  BooksRepository,
  BookShelf,
  readerOf,
  createEmbedder,
  EmbeddingsRepository,
  fuseRankings,
  HttpEmbedder,
  PassagesRepository,
} from '@parley/books';
import { EmbeddingsConfig, loadEmbeddingsConfig } from '@parley/config';
import { honestBook } from '../support/hostile-books';
import { FakeEmbeddings } from '../support/fake-embeddings/fake-embeddings.server';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/** A book whose chapters are about different things, for checking what search finds. */
function themedBook(): string {
  const filler = (n: number) =>
    Array.from({ length: n }, (_, i) => `The river ran past the mill and the fields lay quiet number ${i}.`).join(' ');
  return [
    '# Chapter 1: The Garden',
    `The queen ordered the gardeners to paint the roses red before the croquet game began. ${filler(4)}`,
    filler(12),
    '# Chapter 2: The Kitchen',
    `A grinning cat sat on the kitchen dresser while the cook threw pepper into the soup. ${filler(4)}`,
    filler(12),
    '# Chapter 3: The Trial',
    `At the trial the king asked the hatter about the stolen tarts and the witnesses trembled. ${filler(4)}`,
    filler(12),
    '# Chapter 4: The Sea',
    `The mock turtle sang sadly of lobsters dancing a quadrille by the sea. ${filler(4)}`,
  ].join('\n\n');
}

describe('semantic retrieval (embeddings fused with full text)', () => {
  let db: TestDatabase;
  let voyage: FakeEmbeddings;
  let openai: FakeEmbeddings;
  const count = async (sql: string, params: unknown[]) =>
    (await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params)).rows[0].n;

  const config = (fake: FakeEmbeddings, over: Partial<EmbeddingsConfig> = {}): EmbeddingsConfig => ({
    ...loadEmbeddingsConfig({
      EMBEDDINGS_PROVIDER: fake === voyage ? 'voyage' : 'openai',
      EMBEDDINGS_API_KEY: 'test-key',
      EMBEDDINGS_BASE_URL: fake.url,
    }),
    batchSize: 16,
    maxRetries: 2,
    timeoutMs: 5_000,
    ...over,
  });
  /** Ingestion and search over the embeddings of `cfg`. */
  const service = (cfg: EmbeddingsConfig, storeBatch = 32) => {
    const repo = new BooksRepository(db.pool);
    const embeddings = new BookEmbeddings(createEmbedder(cfg)!, new EmbeddingsRepository(db.pool), storeBatch);
    return {
      ingester: new BookIngest(repo, undefined, embeddings),
      searcher: new BookSearch(new PassagesRepository(db.pool), new BookShelf(db.pool), embeddings),
      embeddings,
    };
  };
  const lexicalOnly = () => new BookSearch(new PassagesRepository(db.pool), new BookShelf(db.pool));

  beforeAll(async () => {
    HttpEmbedder.backoffMs = 20; // retries in milliseconds, not seconds
    db = await createTestDatabase();
    voyage = await FakeEmbeddings.start({
      flavour: 'voyage',
      apiKey: 'test-key',
      models: ['voyage-3.5', 'voyage-3-lite'],
    });
    openai = await FakeEmbeddings.start({ flavour: 'openai', apiKey: 'test-key', dimensions: 96 });
  });
  afterAll(async () => {
    await voyage.close();
    await openai.close();
    await db.drop();
  });
  beforeEach(() => {
    voyage.down = false;
    openai.down = false;
    voyage.requests.length = voyage.rejected.length = 0;
    openai.requests.length = openai.rejected.length = 0;
  });

  it('ingest embeds every passage in batches within the limits, with progress, and search fuses', async () => {
    const books = service(config(voyage));
    const seen: BookProgress[] = [];
    const book = await books.ingester.ingest(
      `u-${randomUUID()}`,
      { title: 'Big', format: 'text', content: honestBook(0.3) },
      (p) => seen.push({ ...p }),
    );
    expect(book.status).toBe('ready');
    expect(book.chunkCount).toBeGreaterThan(100);
    expect(await count('book_chunk_embeddings WHERE book_id = $1 AND model = $2', [book.id, 'voyage-3.5'])).toBe(
      book.chunkCount,
    );
    expect(voyage.rejected).toEqual([]);
    expect(voyage.embedded).toBe(book.chunkCount);
    expect(voyage.requests.every((r) => r.input.length <= 16 && r.inputType === 'document')).toBe(true);
    // progress rises batch by batch to the whole book
    const embedding = seen.filter((p) => p.phase === 'embedding').map((p) => p.embeddingsWritten!);
    expect(embedding.length).toBeGreaterThan(3);
    expect([...embedding].sort((a, b) => a - b)).toEqual(embedding);
    expect(embedding.at(-1)).toBe(book.chunkCount);
    expect(book.progress).toMatchObject({ phase: 'done', embeddingsWritten: book.chunkCount });
    const { rows } = await db.pool.query('SELECT embedding_status, embedding_model FROM books WHERE id = $1', [
      book.id,
    ]);
    expect(rows[0]).toEqual({ embedding_status: 'ready', embedding_model: 'voyage-3.5' });

    // a query: the same fusion of the full-text and the vector rankings, scores in 0..1
    const { rows: chunk } = await db.pool.query('SELECT text FROM book_chunks WHERE book_id = $1 AND ordinal = 40', [
      book.id,
    ]);
    const query = chunk[0].text.split(' ').slice(3, 9).join(' ');
    const { items } = await books.searcher.search(null, book.id, query, { k: 8, maxChapter: 30 });
    expect(voyage.requests.at(-1)).toMatchObject({ inputType: 'query', input: [query] });
    const lexical = (await lexicalOnly().search(null, book.id, query, { k: 20, maxChapter: 30 })).items;
    expect(items.length).toBe(8);
    expect(items.every((h) => h.score >= 0 && h.score <= 1 && h.chapterIndex <= 30)).toBe(true);
    expect(items.slice(0, 3).map((h) => h.text)).toContain(chunk[0].text);
    expect(items[0].score).toBeGreaterThan(0.5);
    const embeddings = books.embeddings;
    const vector = await embeddings.nearest(book.id, await embeddings.embedder.embedQuery(query), 50, 30);
    const lexical50 = await new PassagesRepository(db.pool).search(book.id, query, 50, 30);
    expect(items.map((h) => h.chunkId)).toEqual(fuseRankings(lexical50, vector, 8).map((h) => h.chunkId));
    expect(lexical.map((h) => h.chunkId)).not.toEqual(items.map((h) => h.chunkId).slice(0, lexical.length));
  }, 120_000);

  it('finds a paraphrase full text misses, and keeps to the reading position', async () => {
    const books = service(config(openai));
    const book = await books.ingester.ingest(`u-${randomUUID()}`, {
      title: 'Themes',
      format: 'markdown',
      content: themedBook(),
    });
    expect(openai.requests.every((r) => r.inputType === undefined)).toBe(true);
    const hybrid = await books.searcher.search(null, book.id, 'what did the monarch demand of the gardeners');
    expect(hybrid.items[0].text).toContain('The queen ordered the gardeners');
    const feline = await books.searcher.search(null, book.id, 'feline on the dresser');
    expect(feline.items[0].text).toContain('grinning cat');
    const lexical = await lexicalOnly().search(null, book.id, 'feline on the dresser');
    expect(lexical.items[0]?.text ?? '').toContain('grinning cat'); // full text has "dresser" too…
    const noWord = await lexicalOnly().search(null, book.id, 'feline');
    expect(noWord.items.some((h) => h.text.includes('grinning cat'))).toBe(false); // …but not "feline"
    const felineOnly = await books.searcher.search(null, book.id, 'feline');
    expect(felineOnly.items[0].text).toContain('grinning cat');
    // chapter 2 is past the reader: nothing from it, from either ranking
    const early = await books.searcher.search(null, book.id, 'feline on the dresser', { maxChapter: 1 });
    expect(early.items.every((h) => h.chapterIndex <= 1)).toBe(true);
  });

  it('retries a 429 (honouring Retry-After) and a 503, then succeeds', async () => {
    const books = service(config(voyage));
    voyage.failNext({ status: 429, retryAfter: '1' }, { status: 503 });
    const started = Date.now();
    const book = await books.ingester.ingest(`u-${randomUUID()}`, {
      title: 'Themes',
      format: 'markdown',
      content: themedBook(),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(voyage.rejected.map((r) => r.status)).toEqual([429, 503]);
    expect(await count('book_chunk_embeddings WHERE book_id = $1', [book.id])).toBe(book.chunkCount);
    expect(await books.embeddings.ready(book.id)).toBe(true);
  });

  it('a provider that is down leaves the book ready and searchable by full text', async () => {
    const books = service(config(voyage));
    voyage.down = true;
    const owner = `u-${randomUUID()}`;
    const book = await books.ingester.ingest(owner, { title: 'Themes', format: 'markdown', content: themedBook() });
    expect(book.status).toBe('ready');
    expect(book.embeddings).toEqual({ status: 'failed', model: 'voyage-3.5' });
    const { rows } = await db.pool.query('SELECT embedding_status FROM books WHERE id = $1', [book.id]);
    expect(rows[0].embedding_status).toBe('failed');
    expect(voyage.rejected.length).toBe(3); // the first try and two retries
    const lexical = await lexicalOnly().search(readerOf(owner), book.id, 'queen gardeners roses');
    expect(await books.searcher.search(readerOf(owner), book.id, 'queen gardeners roses')).toEqual(lexical);
    expect(lexical.items[0].text).toContain('The queen ordered');

    // embedded while up; down at query time: the full-text ranking alone
    voyage.down = false;
    await books.ingester.reembed();
    expect(await books.embeddings.ready(book.id)).toBe(true);
    voyage.down = true;
    const during = await books.searcher.search(readerOf(owner), book.id, 'queen gardeners roses', { k: 3 });
    expect(during.items).toEqual(lexical.items.slice(0, 3));
  });

  it('a change of model is re-embedded by reembed; until then search stays lexical', async () => {
    const before = service(config(voyage));
    const book = await before.ingester.ingest(`u-${randomUUID()}`, {
      title: 'Themes',
      format: 'markdown',
      content: themedBook(),
    });
    const after = service(config(voyage, { model: 'voyage-3-lite', dimensions: 32 }));
    expect(await after.embeddings.ready(book.id)).toBe(false);
    voyage.requests.length = 0;
    const lexical = await lexicalOnly().search(null, book.id, 'monarch gardeners');
    expect(await after.searcher.search(null, book.id, 'monarch gardeners')).toEqual(lexical);
    expect(voyage.requests).toEqual([]); // no question embedded for vectors of another model

    const seen: string[] = [];
    const { failed } = await after.ingester.reembed((b) => seen.push(b.id));
    expect(failed).toEqual([]);
    expect(seen).toContain(book.id);
    expect(voyage.requests.every((r) => r.model === 'voyage-3-lite')).toBe(true);
    const byModel = await db.pool.query<{ model: string; n: number; bytes: number }>(
      `SELECT model, count(*)::int AS n, min(length(embedding))::int AS bytes FROM book_chunk_embeddings
        WHERE book_id = $1 GROUP BY model`,
      [book.id],
    );
    expect(byModel.rows).toEqual([{ model: 'voyage-3-lite', n: book.chunkCount, bytes: 32 * 4 }]);
    expect(await after.embeddings.ready(book.id)).toBe(true);
    expect((await after.searcher.search(null, book.id, 'monarch gardeners')).items[0].text).toContain(
      'The queen ordered',
    );
    // a second run finds nothing left to do
    voyage.requests.length = 0;
    expect((await after.ingester.reembed()).failed).toEqual([]);
    expect(voyage.requests.filter((r) => r.inputType === 'document')).toEqual([]);
  });

  it('a retried ingest keeps what was stored and embedded, and sends only what is missing', async () => {
    const cfg = config(voyage);
    // the first attempt breaks off after half the vectors are in (the worker died)
    let calls = 0;
    const embedder = createEmbedder(cfg)!;
    const breaking = new BookIngest(
      new BooksRepository(db.pool),
      undefined,
      new BookEmbeddings(
        {
          model: embedder.model,
          dimensions: embedder.dimensions,
          embedQuery: (t) => embedder.embedQuery(t),
          embedDocuments: async (texts) => {
            if (++calls === 3) throw new Error('worker died');
            return embedder.embedDocuments(texts);
          },
        },
        new EmbeddingsRepository(db.pool),
        16,
      ),
    );
    const owner = `u-${randomUUID()}`;
    const accepted = await breaking.accept(owner, { title: 'Big', format: 'text', content: honestBook(0.05) }, null);
    const first = await breaking.process(accepted.id);
    expect(first?.status).toBe('ready'); // an embedding failure never fails the book…
    const { rows } = await db.pool.query('SELECT embedding_status FROM books WHERE id = $1', [accepted.id]);
    expect(rows[0].embedding_status).toBe('failed'); // …it is recorded
    const kept = await count('book_chunk_embeddings WHERE book_id = $1', [accepted.id]);
    expect(kept).toBe(32);

    // the job retried while the book is still ingesting: chunks are kept, only missing vectors sent
    await db.pool.query(`UPDATE books SET status = 'ingesting' WHERE id = $1`, [accepted.id]);
    await db.pool.query(`INSERT INTO book_uploads (book_id, content) VALUES ($1, $2)`, [
      accepted.id,
      Buffer.from(honestBook(0.05)),
    ]);
    const chunkIds = (
      await db.pool.query('SELECT id FROM book_chunks WHERE book_id = $1 ORDER BY ordinal', [accepted.id])
    ).rows;
    voyage.requests.length = 0;
    const book = (await service(cfg).ingester.process(accepted.id))!;
    expect(book.status).toBe('ready');
    expect(
      (await db.pool.query('SELECT id FROM book_chunks WHERE book_id = $1 ORDER BY ordinal', [accepted.id])).rows,
    ).toEqual(chunkIds);
    expect(voyage.embedded).toBe(book.chunkCount - kept);
    expect(await count('book_chunk_embeddings WHERE book_id = $1', [book.id])).toBe(book.chunkCount);
    expect(book.progress).toMatchObject({ embeddingsWritten: book.chunkCount, embeddingsTotal: book.chunkCount });
  });

  it('keeps within the provider limit on inputs, whatever the batch size asked, and refuses a bad key', async () => {
    const embedder = createEmbedder(config(voyage, { batchSize: 5_000 }))!;
    const texts = Array.from({ length: 2_500 }, (_, i) => `passage number ${i}`);
    const vectors = await embedder.embedDocuments(texts);
    expect(vectors).toHaveLength(2_500);
    expect(voyage.requests.map((r) => r.input.length)).toEqual([1000, 1000, 500]);
    expect(voyage.rejected).toEqual([]);
    expect(Math.hypot(...vectors[0])).toBeCloseTo(1, 5);

    const wrongKey = createEmbedder(config(voyage, { apiKey: 'wrong' }))!;
    await expect(wrongKey.embedQuery('anything')).rejects.toMatchObject({ status: 401 });
    expect(voyage.rejected).toHaveLength(1); // a 401 is not retried
  });
});
