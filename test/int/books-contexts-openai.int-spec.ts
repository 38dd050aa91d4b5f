import { randomUUID } from 'node:crypto';
import {
  BookContexts,
  BookIngest,
  BookSearch,
  BooksRepository,
  BookShelf,
  CONTEXT_INSTRUCTIONS,
  ContextsRepository,
  contextsOf,
  type ContextualizationState,
  PassagesRepository,
} from '@parley/books';
import { ConfigError, loadContextualConfig, type ContextualConfig } from '@parley/config';
import { priceTableWith, roundUsd } from '@parley/agent';
import {
  chatApiError,
  FakeOpenAi,
  type FakeChatReply,
  type RecordedChatRequest,
} from '../support/fake-openai/fake-openai.server';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/** A model priced the way an operator's LLM_PRICES would price it, on the Chat Completions API. */
const MODEL = 'ctx-mini';
const PRICE = { provider: 'openai' as const, input: 2, output: 8, cachedInput: 0.5 };
/** The shipped prices with the operator's price of MODEL over them, as LLM_PRICES would put it. */
const prices = priceTableWith({ [MODEL]: PRICE });
const usdOf = (t: { input: number; cached: number; output: number }) =>
  roundUsd((t.input * PRICE.input + t.cached * PRICE.cachedInput + t.output * PRICE.output) / 1e6);

/** A book of a few chapters, long enough for OpenAI's cache (1,024 tokens); "zeppelin" is nowhere in it. */
function book(): string {
  const filler = (n: number, what: string) =>
    Array.from({ length: n }, (_, i) => `The ${what} lay quiet by the mill on day number ${i}.`).join(' ');
  return [
    '# Chapter 1: The Garden',
    `The queen ordered the gardeners to paint the roses red before the croquet game began. ${filler(60, 'river')}`,
    '# Chapter 2: The Kitchen',
    `A grinning cat sat on the kitchen dresser while the cook threw pepper into the soup. ${filler(60, 'field')}`,
    '# Chapter 3: The Trial',
    `At the trial the king asked the hatter about the stolen tarts. ${filler(60, 'meadow')}`,
  ].join('\n\n');
}

/** The fake model's context: one with a word the book lacks for the croquet passage. */
function contextReply(req: RecordedChatRequest): FakeChatReply {
  const passage: string = req.body.messages[1].content;
  return {
    text: passage.includes('croquet')
      ? 'In the garden chapter the zeppelin herald watches the queen prepare for croquet.'
      : 'A quiet passage of the book.',
  };
}

describe('contextual retrieval on the Chat Completions API (an openai CONTEXTUAL_MODEL)', () => {
  let db: TestDatabase;
  let fake: FakeOpenAi;
  const config = (over: Partial<ContextualConfig> = {}): ContextualConfig => ({
    ...loadContextualConfig({
      CONTEXTUAL_RETRIEVAL: 'true',
      CONTEXTUAL_MODEL: MODEL,
      OPENAI_API_KEY: 'test-key',
      OPENAI_BASE_URL: fake.url,
    })!,
    maxRetries: 1,
    concurrency: 2,
    timeoutMs: 10_000,
    ...over,
  });
  const contexts = (over: Partial<ContextualConfig> = {}) => contextsOf(config(over), db.pool, null, prices);
  const ingestion = (c: BookContexts | null) => new BookIngest(new BooksRepository(db.pool), undefined, null, c);
  const search = (...args: Parameters<BookSearch['search']>) =>
    new BookSearch(new PassagesRepository(db.pool), new BookShelf(db.pool)).search(...args);
  const state = async (id: string) => (await new ContextsRepository(db.pool).state(id)) as ContextualizationState;
  const ledger = async (bookId: string) =>
    (
      await db.pool.query<{
        kind: string;
        model: string;
        input_tokens: number;
        output_tokens: number;
        cache_read_input_tokens: number;
        cache_creation_input_tokens: number;
        cost_usd: number;
      }>(
        `SELECT kind, model, input_tokens::int, output_tokens::int, cache_read_input_tokens::int,
                cache_creation_input_tokens::int, cost_usd::float8
           FROM usage_records WHERE book_id = $1 ORDER BY at, event_id`,
        [bookId],
      )
    ).rows;

  beforeAll(async () => {
    db = await createTestDatabase();
    fake = await FakeOpenAi.start({ defaultResponder: contextReply, minCacheableTokens: 1024 });
  });
  afterAll(async () => {
    await fake.close();
    await db.drop();
  });
  beforeEach(() => fake.reset());

  it('needs OPENAI_API_KEY (or a self-hosted OPENAI_BASE_URL), not ANTHROPIC_API_KEY', () => {
    const keyless = loadContextualConfig({
      CONTEXTUAL_RETRIEVAL: 'true',
      CONTEXTUAL_MODEL: MODEL,
      ANTHROPIC_API_KEY: 'sk-ant',
    })!;
    expect(() => contextsOf(keyless, db.pool, null, prices)).toThrow(ConfigError);
    expect(() => contextsOf(keyless, db.pool, null, prices)).toThrow(
      /OPENAI_API_KEY: required .*CONTEXTUAL_MODEL ctx-mini/,
    );
  });

  it('ingest: valid requests with the book as a stable prefix, contexts stored and searchable, cached tokens recorded and priced', async () => {
    const c = contexts();
    const owner = `u-${randomUUID()}`;
    const b = await ingestion(c).ingest(owner, { title: 'Wonder', format: 'markdown', content: book() });
    expect(b.status).toBe('ready');
    expect(b.chunkCount).toBeGreaterThan(2);
    expect(fake.rejected).toEqual([]);
    expect(fake.requests).toHaveLength(b.chunkCount);
    for (const r of fake.requests) {
      expect(r.headers.authorization).toBe('Bearer test-key');
      expect(r.body).toMatchObject({ model: MODEL, max_completion_tokens: 150 });
      expect(r.body).not.toHaveProperty('stream');
      expect(r.body).not.toHaveProperty('temperature');
      const [system, user] = r.body.messages;
      expect(system.role).toBe('system');
      expect(system.content).toContain('The queen ordered the gardeners');
      expect(system.content).toContain('## Chapter 3: The Trial');
      expect(user.role).toBe('user');
      expect(user.content).toMatch(/^<passage>\n/);
      expect(user.content.endsWith(CONTEXT_INSTRUCTIONS)).toBe(true);
    }
    // one prefix for all: byte-identical, so OpenAI's automatic cache reads it
    expect(new Set(fake.requests.map((r) => r.body.messages[0].content)).size).toBe(1);

    // every call a ledger line of the uploader's: cached_tokens as cache reads, no cache writes, priced at cachedInput
    const lines = await ledger(b.id);
    expect(lines).toHaveLength(b.chunkCount);
    for (const l of lines) {
      expect(l).toMatchObject({ kind: 'contextualization', model: MODEL, cache_creation_input_tokens: 0 });
      expect(l.cost_usd).toBeCloseTo(
        usdOf({ input: l.input_tokens, cached: l.cache_read_input_tokens, output: l.output_tokens }),
        6,
      );
    }
    // the first request (alone) found nothing cached; every later one read the book from the cache
    const reads = lines.map((l) => l.cache_read_input_tokens).sort((x, y) => x - y);
    expect(reads[0]).toBe(0);
    expect(reads[1]).toBeGreaterThanOrEqual(1024);
    expect(new Set(reads.slice(1)).size).toBe(1);

    const s = await state(b.id);
    expect(s).toMatchObject({ status: 'ready', model: MODEL, done: b.chunkCount, total: b.chunkCount });
    const sum = (k: keyof (typeof lines)[number]) => lines.reduce((n, l) => n + (l[k] as number), 0);
    expect(s.usage).toMatchObject({
      inputTokens: sum('input_tokens'),
      outputTokens: sum('output_tokens'),
      cacheReadInputTokens: sum('cache_read_input_tokens'),
      cacheCreationInputTokens: 0,
    });
    expect(s.usage.usd).toBeCloseTo(
      usdOf({ input: s.usage.inputTokens, cached: s.usage.cacheReadInputTokens, output: s.usage.outputTokens }),
      6,
    );
    // the estimate, made before the first call: no cache write on OpenAI, the book read by every later request
    expect(s.estimate).toMatchObject({ model: MODEL, passages: b.chunkCount, truncated: false });
    expect(s.estimate.tokens.cacheCreationInputTokens).toBe(0);
    expect(s.estimate.tokens.cacheReadInputTokens).toBeGreaterThan(0);
    expect(s.estimate.usd).toBeGreaterThan(0);

    // the context is indexed, the passage shown is the text alone
    const { items } = await search(null, b.id, 'zeppelin herald');
    expect(items[0]?.text).toMatch(/^The queen ordered the gardeners/);
    expect(items[0].text).not.toContain('zeppelin');
  });

  it('a call failing past its retries ends the run (usage so far kept, priced as the provider reported it); a re-run finishes', async () => {
    const b = await ingestion(null).ingest(`u-${randomUUID()}`, {
      title: 'Flaky',
      format: 'markdown',
      content: book(),
    });
    const c = contexts({ concurrency: 1, maxRetries: 1 });
    // the first passage is answered with the provider's own counts; the second fails on its call and its one retry
    const reported = { prompt_tokens: 3000, completion_tokens: 25, cached_tokens: 2048 };
    fake.enqueue((req) => ({ ...contextReply(req), usage: reported }), chatApiError(500), chatApiError(500));
    await expect(c.contextualizeBook(b.id)).rejects.toThrow();
    expect(fake.requests).toHaveLength(3);
    const failed = await state(b.id);
    expect(failed).toMatchObject({ status: 'failed', done: 1, total: b.chunkCount });
    expect(failed.error).toBeTruthy();
    expect(failed.usage).toEqual({
      inputTokens: 952,
      outputTokens: 25,
      cacheReadInputTokens: 2048,
      cacheCreationInputTokens: 0,
      usd: usdOf({ input: 952, cached: 2048, output: 25 }),
    });
    expect(await ledger(b.id)).toEqual([
      expect.objectContaining({ input_tokens: 952, cache_read_input_tokens: 2048, cost_usd: failed.usage.usd }),
    ]);

    fake.reset();
    await c.contextualizeBook(b.id);
    // only the passages without a context were asked for
    expect(fake.requests).toHaveLength(b.chunkCount - 1);
    expect(fake.rejected).toEqual([]);
    expect(await state(b.id)).toMatchObject({ status: 'ready', done: b.chunkCount });
  });

  it('an answer without text (a reasoning model out of output tokens) is paid for, and fails the run saying why', async () => {
    const b = await ingestion(null).ingest(`u-${randomUUID()}`, { title: 'Mute', format: 'markdown', content: book() });
    fake.enqueue({ text: '', finishReason: 'length', usage: { prompt_tokens: 2000, completion_tokens: 150 } });
    await expect(contexts({ concurrency: 1 }).contextualizeBook(b.id)).rejects.toThrow(
      /wrote no context .*before CONTEXTUAL_MAX_OUTPUT_TOKENS \(150\) ran out/,
    );
    expect(fake.requests).toHaveLength(1);
    expect(await ledger(b.id)).toEqual([expect.objectContaining({ input_tokens: 2000, output_tokens: 150 })]);
  });
});
