import { randomUUID } from 'node:crypto';
import {
  BookContexts,
  CONTEXT_ROLE,
  contextsOf,
  BookIngest,
  BookSearch,
  BooksRepository,
  BookShelf,
  ContextsRepository,
  EmbeddingsRepository,
  type ContextualizationState,
  PassagesRepository,
} from '@parley/books';
import { loadContextualConfig, type ContextualConfig } from '@parley/config';
import { priceTableWith, worstCaseUsd } from '@parley/agent';
import { ReadModelQueries, usageReport } from '@parley/read-models';
import {
  apiError,
  FakeAnthropic,
  type FakeReply,
  type RecordedRequest,
} from '../support/fake-anthropic/fake-anthropic.server';
import { honestBook } from '../support/hostile-books';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/** The shipped prices (no LLM_PRICES here). */
const prices = priceTableWith();
const { costUsd } = prices;

/** A book of a few chapters; the word "zeppelin" is nowhere in it. */
function book(): string {
  const filler = (n: number, what: string) =>
    Array.from({ length: n }, (_, i) => `The ${what} lay quiet by the mill on day number ${i}.`).join(' ');
  return [
    '# Chapter 1: The Garden',
    `The queen ordered the gardeners to paint the roses red before the croquet game began. ${filler(20, 'river')}`,
    '# Chapter 2: The Kitchen',
    `A grinning cat sat on the kitchen dresser while the cook threw pepper into the soup. ${filler(20, 'field')}`,
    '# Chapter 3: The Trial',
    `At the trial the king asked the hatter about the stolen tarts. ${filler(20, 'meadow')}`,
  ].join('\n\n');
}

/** The fake model's context: one with a word the book lacks for the croquet passage. */
function contextReply(req: RecordedRequest): FakeReply {
  const passage: string = req.body.messages[0].content[1].text;
  const text = passage.includes('croquet')
    ? 'In the garden chapter the zeppelin herald watches the queen prepare for croquet.'
    : 'A quiet passage of the book.';
  return { content: [{ type: 'text', text }] };
}

describe('contextual retrieval (a context per passage, written by the model, indexed with it)', () => {
  let db: TestDatabase;
  let fake: FakeAnthropic;
  const config = (over: Partial<ContextualConfig> = {}): ContextualConfig => ({
    ...loadContextualConfig({
      CONTEXTUAL_RETRIEVAL: 'true',
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: fake.url,
    })!,
    maxRetries: 1,
    concurrency: 2,
    timeoutMs: 10_000,
    ...over,
  });
  const contexts = (over: Partial<ContextualConfig> = {}, serverBudgetUsd: number | null = null) =>
    contextsOf(config(over), db.pool, serverBudgetUsd, prices);
  const ingestion = (c: BookContexts | null) => new BookIngest(new BooksRepository(db.pool), undefined, null, c);
  const search = (...args: Parameters<BookSearch['search']>) =>
    new BookSearch(new PassagesRepository(db.pool), new BookShelf(db.pool)).search(...args);
  const state = async (id: string) => (await new ContextsRepository(db.pool).state(id)) as ContextualizationState;
  const contextOf = async (id: string) =>
    (
      await db.pool.query<{ context: string | null }>(
        'SELECT context FROM book_chunks WHERE book_id = $1 ORDER BY ordinal',
        [id],
      )
    ).rows.map((r) => r.context);

  beforeAll(async () => {
    db = await createTestDatabase();
    fake = await FakeAnthropic.start({ defaultResponder: contextReply });
  });
  afterAll(async () => {
    await fake.close();
    await db.drop();
  });
  beforeEach(() => fake.reset());

  it('off by default: no config, no calls', () => {
    expect(loadContextualConfig({})).toBeNull();
    // on, an Anthropic model (the default CONTEXTUAL_MODEL) needs its key before anything runs
    const keyless = loadContextualConfig({ CONTEXTUAL_RETRIEVAL: 'true' })!;
    expect(() => contextsOf(keyless, db.pool, null, prices)).toThrow(/ANTHROPIC_API_KEY: required/);
  });

  it("bills every call to the uploader in the usage ledger, and stops at the uploader's budget", async () => {
    const usageOf = async (owner: string) =>
      usageReport(await new ReadModelQueries(async () => db.pool).usage(owner, {}), costUsd);
    // no budget: every call is a line of the uploader's, and the ledger says what the run recorded
    const paying = `u-${randomUUID()}`;
    const b = await ingestion(contexts()).ingest(paying, { title: 'Wonder', format: 'markdown', content: book() });
    const lines = await db.pool.query(
      'SELECT kind, book_id, owner_id, conversation_id FROM usage_records WHERE book_id = $1',
      [b.id],
    );
    expect(lines.rows).toHaveLength(b.chunkCount);
    expect(lines.rows[0]).toEqual({
      kind: 'contextualization',
      book_id: b.id,
      owner_id: paying,
      conversation_id: null,
    });
    const s = await state(b.id);
    expect((await usageOf(paying)).costUsd).toBeCloseTo(s.usage.usd, 6);

    // a budget below one call's worst case: no call is made at all
    const first = fake.requests[0].body;
    fake.reset();
    const broke = await ingestion(contexts({}, 0.000001)).ingest(`u-${randomUUID()}`, {
      title: 'Wonder',
      format: 'markdown',
      content: book(),
    });
    expect(broke.status).toBe('ready'); // the book is readable; its passages lack contexts
    expect(fake.requests).toHaveLength(0);
    expect(await state(broke.id)).toMatchObject({
      status: 'failed',
      done: 0,
      error: expect.stringContaining('budget'),
    });

    // a budget that holds the first call's worst case (the server's here): the others do not fit beside it
    const [prefix, passage] = first.messages[0].content;
    const budgetUsd =
      1.02 *
      worstCaseUsd(
        {
          model: first.model,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: prefix.text },
                { type: 'text', text: passage.text },
              ],
            },
          ],
          tools: [],
          options: { system: CONTEXT_ROLE },
          maxTokens: first.max_tokens,
        },
        prices,
      );
    const thrifty = `u-${randomUUID()}`;
    const held = await ingestion(contexts({}, budgetUsd)).ingest(thrifty, {
      title: 'Wonder',
      format: 'markdown',
      content: book(),
    });
    expect(held.status).toBe('ready');
    expect(fake.requests).toHaveLength(1);
    expect(await state(held.id)).toMatchObject({ status: 'failed', done: 1, error: expect.stringContaining('budget') });
    const spent = await usageOf(thrifty);
    expect(spent.costUsd).toBeGreaterThan(0);
    expect(spent.costUsd).toBeLessThanOrEqual(budgetUsd);
    const heldLines = await db.pool.query('SELECT cost_usd FROM usage_records WHERE book_id = $1', [held.id]);
    expect(heldLines.rows).toEqual([{ cost_usd: spent.costUsd }]);
    // every reservation was settled with its line or given back
    const open = await db.pool.query('SELECT count(*)::int AS n FROM budget_reservations WHERE owner_id = $1', [
      thrifty,
    ]);
    expect(open.rows[0].n).toBe(0);
  });

  it('ingest: cached book prefix, well-formed requests, contexts stored and searchable, estimate then usage', async () => {
    const c = contexts();
    const books = ingestion(c);
    const b = await books.ingest(`u-${randomUUID()}`, { title: 'Wonder', format: 'markdown', content: book() });
    expect(b.status).toBe('ready');
    expect(b.chunkCount).toBeGreaterThan(2);
    expect(fake.rejected).toEqual([]);
    expect(fake.requests).toHaveLength(b.chunkCount);
    for (const r of fake.requests) {
      expect(r.body).not.toHaveProperty('temperature');
      expect(r.body.model).toBe('claude-haiku-4-5');
      const [prefix, passage] = r.body.messages[0].content;
      expect(prefix.cache_control).toEqual({ type: 'ephemeral' });
      expect(prefix.text).toContain('The queen ordered the gardeners');
      expect(prefix.text).toContain('## Chapter 3: The Trial');
      expect(passage.cache_control).toBeUndefined();
      expect(passage.text).toMatch(/^<passage>/);
    }
    // one prefix for all: byte-identical
    expect(new Set(fake.requests.map((r) => r.body.messages[0].content[0].text)).size).toBe(1);

    const s = await state(b.id);
    expect(s).toMatchObject({ status: 'ready', model: 'claude-haiku-4-5', done: b.chunkCount, total: b.chunkCount });
    // the book was written to the cache once and read from it by every other request
    expect(s.usage.cacheCreationInputTokens).toBeGreaterThan(0);
    expect(s.usage.cacheReadInputTokens).toBe(s.usage.cacheCreationInputTokens * (b.chunkCount - 1));
    expect(s.usage.outputTokens).toBeGreaterThan(0);
    expect(s.estimate).toMatchObject({ passages: b.chunkCount, truncated: false });
    expect(s.estimate.usd).toBeGreaterThan(0);
    expect(s.usage.usd).toBeGreaterThan(0);

    // the context is indexed, the passage shown is the text alone
    const { items } = await search(null, b.id, 'zeppelin herald');
    expect(items[0]?.text).toMatch(/^The queen ordered the gardeners/);
    expect(items[0].text).not.toContain('zeppelin');
    // and the embedding pass would embed context and text together
    const toEmbed = await new EmbeddingsRepository(db.pool).missing(b.id, 'any-model');
    expect(toEmbed[0].text).toMatch(/^In the garden chapter the zeppelin herald.*\n\nThe queen ordered/s);

    // a re-run asks for nothing: every passage has its context
    await c.contextualizeBook(b.id);
    expect(fake.requests).toHaveLength(b.chunkCount);
    expect(await state(b.id)).toEqual(s); // and the run's record stays
  });

  it('shows the estimate before the first call, and records it on the book', async () => {
    const b = await ingestion(null).ingest(`u-${randomUUID()}`, {
      title: 'Plain',
      format: 'markdown',
      content: book(),
    });
    expect(fake.requests).toHaveLength(0);
    expect((await search(null, b.id, 'zeppelin herald')).items).toEqual([]);
    const c = contexts();
    const estimate = await c.estimate(b.id);
    expect(fake.requests).toHaveLength(0); // an estimate sends nothing
    expect(estimate.passages).toBe(b.chunkCount);
    expect(estimate.tokens.cacheCreationInputTokens).toBe(estimate.bookTokens);
    expect(estimate.tokens.cacheReadInputTokens).toBe(estimate.bookTokens * (b.chunkCount - 1));
    let before: ContextualizationState | null = null;
    await c.contextualizeBook(b.id, async () => {
      before ??= await state(b.id);
      expect(before).toBeTruthy();
    });
    expect(before).toMatchObject({ status: 'running', done: 0, estimate });
    expect(fake.requests.length).toBe(b.chunkCount);
    // contextualised after ingest, the book is found by its context words
    expect((await search(null, b.id, 'zeppelin herald')).items[0]?.text).toMatch(/^The queen/);
  });

  it('retries a failing call, then records the failure and keeps the contexts done; a re-run finishes', async () => {
    const b = await ingestion(null).ingest(`u-${randomUUID()}`, {
      title: 'Flaky',
      format: 'markdown',
      content: book(),
    });
    const c = contexts({ concurrency: 1, maxRetries: 1 });
    // the first passage is answered; the second fails on its call and on its one retry
    fake.enqueue(contextReply, apiError(529), apiError(529));
    await expect(c.contextualizeBook(b.id)).rejects.toThrow();
    expect(fake.requests).toHaveLength(3);
    const failed = await state(b.id);
    expect(failed).toMatchObject({ status: 'failed', done: 1, total: b.chunkCount });
    expect(failed.error).toBeTruthy();
    const kept = await contextOf(b.id);
    expect(kept[0]).toMatch(/zeppelin/);
    expect(kept.slice(1).every((x) => x === null)).toBe(true);

    fake.reset();
    await c.contextualizeBook(b.id);
    // only the passages without a context were asked for
    expect(fake.requests).toHaveLength(b.chunkCount - 1);
    expect(fake.requests.some((r) => r.body.messages[0].content[1].text.includes('croquet'))).toBe(false);
    expect((await contextOf(b.id)).every((x) => x)).toBe(true);
    expect(await state(b.id)).toMatchObject({ status: 'ready', done: b.chunkCount });
  });
  it('many lanes at once: contexts sharing new words do not deadlock on the vocabulary', async () => {
    const b = await ingestion(null).ingest(`u-${randomUUID()}`, {
      title: 'Wide',
      format: 'text',
      content: honestBook(0.15),
    });
    expect(b.chunkCount).toBeGreaterThan(60);
    // each context: 25 of 40 words the book lacks, in a different order each time
    const vocab = Array.from(
      { length: 40 },
      (_, i) => `zed${'abcdefghijklmnopqrstuvwxyz'[i % 26]}${'xy'[i >> 5] ?? 'w'}`,
    );
    let seed = 1;
    const shuffled = () =>
      [...vocab]
        .sort(() => ((seed = (seed * 16807) % 2147483647) % 3) - 1)
        .slice(0, 25)
        .join(' ');
    fake.enqueue(
      ...Array.from({ length: b.chunkCount }, () => (): FakeReply => ({
        content: [{ type: 'text', text: shuffled() }],
      })),
    );
    await contexts({ concurrency: 8 }).contextualizeBook(b.id);
    expect((await contextOf(b.id)).every((x) => x)).toBe(true);
    // each new word counted once per passage that gained it
    const { rows } = await db.pool.query<{ lexeme: string; ndoc: number; n: number }>(
      `SELECT t.lexeme, t.ndoc,
              (SELECT count(*)::int FROM book_chunks c WHERE c.book_id = $1 AND c.tsv @@ t.lexeme::tsquery) AS n
         FROM book_terms t WHERE t.book_id = $1 AND t.lexeme LIKE 'zed%'`,
      [b.id],
    );
    expect(rows.length).toBeGreaterThan(20);
    expect(rows.filter((r) => r.ndoc !== r.n)).toEqual([]);
  });
  it('a book deleted during the run: no more calls are paid for', async () => {
    const b = await ingestion(null).ingest(`u-${randomUUID()}`, { title: 'Gone', format: 'markdown', content: book() });
    const c = contexts({ concurrency: 1 });
    const run = c.contextualizeBook(b.id, async ({ done }) => {
      if (done === 1) await db.pool.query('DELETE FROM books WHERE id = $1', [b.id]);
    });
    await expect(run).rejects.toMatchObject({ code: '23503' });
    expect(fake.requests).toHaveLength(2); // the one answered before the delete was seen, and no more
    expect(b.chunkCount).toBeGreaterThan(2);
  });
});
