/**
 * The catalogue at scale (issue 42), in its own database (parley_bench_catalogue, recreated on
 * each run):
 *
 * 1. `GET /v1/books` for a reader of a tenant whose catalogue holds CATALOGUE_BOOKS books (and 20
 *    books of their own): the first page and a page deep in the list, through BookShelf.page (the
 *    service's SQL), p50 over REPEAT runs; with the plan of the first page.
 * 2. Search on one catalogue book that READERS readers' conversations use, against the same book
 *    uploaded privately: BookSearch.search as the agent's tool calls it (sourcesReader), p50, and
 *    the ratio catalogue / private (goal ≈ 1: the conversations are not on the search path).
 * 3. The first turn of a new reader of a catalogue book, priced from the request the worker sends
 *    (AnthropicLlm.request) through the fake Messages API's prompt-cache simulation, with the system
 *    prompt as it was before (one block, the reading position inside it) and as it is now (the
 *    book's part, cached, then the reader's): a first reader at chapter 3 writes the cache, a
 *    second at chapter 5 asks. Priced at claude-sonnet-5-5's list prices.
 *
 *   npm run bench:catalogue                  (CATALOGUE_BOOKS=10000 READERS=1000 REPEAT=20)
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Pool } from 'pg';
import { loadDatabaseUrl } from '../libs/config/src';
import { projectRoot } from '../libs/platform/src/project-root';
import { BooksRepository } from '../libs/books/src/books.repository';
import { PassagesRepository } from '../libs/books/src/search/passages.repository';
import { BookIngest } from '../libs/books/src/book-ingest';
import { BookSearch } from '../libs/books/src/book-search';
import { BookShelf } from '../libs/books/src/catalogue/book-shelf.repository';
import { readerOf } from '../libs/books/src/catalogue/book-reader';
import { SearchBookTool } from '../libs/books/src/search-book.tool';
import { BookQueries } from '../libs/books/src/book-queries';
import { AnthropicLlm } from '../libs/agent/src/llm/anthropic.llm';
import { priceTableWith } from '../libs/agent/src/llm/pricing';
import { renderPrompt } from '../libs/agent/src/prompts';
import { systemPrompt } from '../apps/worker/src/turns/system-prompt';
import { PromptCache } from '../test/support/fake-anthropic/prompt-cache';
import { percentile, recreateDatabase } from './bench-db';

/** The shipped prices (no LLM_PRICES here). */
const { costUsd } = priceTableWith();

const CATALOGUE_BOOKS = Number(process.env.CATALOGUE_BOOKS ?? 10_000);
const READERS = Number(process.env.READERS ?? 1000);
const REPEAT = Number(process.env.REPEAT ?? 20);
const MODEL = 'claude-sonnet-5-5';
const QUESTIONS = ['Cheshire Cat grin', 'the Queen playing croquet', 'Mad Hatter tea party', 'rabbit hole falling'];

async function timed(n: number, f: () => Promise<unknown>): Promise<number> {
  await f(); // warm
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await f();
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return percentile(
    ms.sort((a, b) => a - b),
    50,
  );
}

async function listing(pool: Pool, shelf: BookShelf, tenant: string): Promise<void> {
  const reader = readerOf(`reader-${randomUUID()}`, tenant);
  // catalogue books as a publisher's bulk upload would leave them (ready, no passages needed to list)
  await pool.query(
    `INSERT INTO books (owner_id, title, format, chapters, chunk_count, avg_chunk_bytes, size_bytes, status, visibility, tenant, created_at)
     SELECT 'publisher', 'Catalogue book ' || g, 'text', '[]', 0, 0, 1, 'ready', 'catalogue', $1, now() - g * interval '1 second'
       FROM generate_series(1, $2) g`,
    [tenant, CATALOGUE_BOOKS],
  );
  await pool.query(
    `INSERT INTO books (owner_id, title, format, chapters, chunk_count, avg_chunk_bytes, size_bytes, status, created_at)
     SELECT $1, 'Own book ' || g, 'text', '[]', 0, 0, 1, 'ready', now() - g * interval '7 seconds' FROM generate_series(1, 20) g`,
    [reader.id],
  );
  await pool.query('ANALYZE books');
  const first = await timed(REPEAT, () => shelf.page(reader, { limit: 100 }));
  let cursor: string | undefined;
  for (let i = 0; i < 50; i++) cursor = (await shelf.page(reader, { limit: 100, cursor })).nextCursor ?? undefined;
  const deep = await timed(REPEAT, () => shelf.page(reader, { limit: 100, cursor }));
  const catalogueOnly = await timed(REPEAT, () => shelf.page(reader, { limit: 100, visibility: 'catalogue' }));
  console.log(`\n## GET /v1/books with ${CATALOGUE_BOOKS} catalogue books and 20 own (100 a page, p50 of ${REPEAT})`);
  console.log(`| page | ms |\n| --- | --- |`);
  console.log(`| first | ${first.toFixed(2)} |\n| 51st (after 5,000 books) | ${deep.toFixed(2)} |`);
  console.log(`| first, ?visibility=catalogue | ${catalogueOnly.toFixed(2)} |`);
}

async function search(pool: Pool, shelf: BookShelf, tenant: string): Promise<void> {
  const repo = new BooksRepository(pool);
  const ingest = new BookIngest(repo);
  const content = readFileSync(path.join(projectRoot(), 'data/books/alice.txt'), 'utf8');
  const owner = `owner-${randomUUID()}`;
  const own = await ingest.ingest(owner, { title: 'Alice', format: 'text', content });
  const accepted = await ingest.accept('publisher', { title: 'Alice', format: 'text', content }, null, {
    catalogue: tenant,
  });
  const published = (await ingest.process(accepted.id))!;
  // READERS readers' conversations about the catalogue book, in the log and the read model
  await pool.query(
    `INSERT INTO events (stream_id, version, event_id, type, data, metadata)
     SELECT 'conversation-' || gen_random_uuid(), 1, gen_random_uuid(), 'ConversationStarted',
            jsonb_build_object('ownerId', 'reader-' || g, 'bookId', $1::text, 'title', null, 'readingPosition', null), '{}'
       FROM generate_series(1, $2) g`,
    [published.id, READERS],
  );
  const tool = new SearchBookTool(new BookSearch(new PassagesRepository(pool), shelf), new BookQueries(shelf));
  const ask = (bookId: string, userId: string) => async () => {
    for (const query of QUESTIONS) {
      const out = await tool.run(
        { query },
        { userId, catalogue: '', conversationId: randomUUID(), readingPosition: 8, bookId, bookIds: [bookId] },
      );
      if (out.isError) throw new Error(`search_book failed: ${out.content}`);
    }
  };
  const privately = await timed(REPEAT, ask(own.id, owner));
  const catalogue = await timed(REPEAT, ask(published.id, `reader-${READERS}`));
  const direct = new BookSearch(new PassagesRepository(pool), shelf);
  const api = await timed(REPEAT, () => direct.search(readerOf('reader-1', tenant), published.id, QUESTIONS[0]));
  console.log(`\n## search_book on one book, ${QUESTIONS.length} questions a run (p50 of ${REPEAT})`);
  console.log(`| book | ms | ratio to private |\n| --- | --- | --- |`);
  console.log(`| private | ${privately.toFixed(2)} | 1.00 |`);
  console.log(
    `| catalogue, ${READERS} readers' conversations on it | ${catalogue.toFixed(2)} | ${(catalogue / privately).toFixed(2)} |`,
  );
  console.log(`| (GET /v1/books/:id/search, one question, a tenant's reader) | ${api.toFixed(2)} | |`);
}

function firstTurnCost(): void {
  const llm = new AnthropicLlm({ model: MODEL, maxTokens: 1024, maxRetries: 0, apiKey: 'bench' });
  const tool = new SearchBookTool(undefined as never, undefined as never);
  const tools = [{ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }];
  const book = '"Alice\'s Adventures in Wonderland" by Lewis Carroll';
  const scope = (n: number) =>
    `The reader has read up to and including chapter ${n}. Search only finds passages up to there.`;
  // the system prompt before this change: one block, the reader's position in its middle
  const before = (n: number) => ({
    system: renderPrompt('conversation_system_prompt', { book }).replace(
      'How to answer:',
      `${scope(n)}\n\nHow to answer:`,
    ),
  });
  const after = (n: number) => systemPrompt(book, n, undefined);
  const question = (q: string) => [{ role: 'user' as const, content: [{ type: 'text' as const, text: q }] }];
  const rows: string[] = [];
  for (const [name, layout] of [
    ['before (one system block)', before],
    ['after (book, then reader)', after],
  ] as const) {
    const cache = new PromptCache(0);
    cache.account(llm.request(question('Who is the Cheshire Cat?'), tools, layout(3)));
    const u = cache.account(llm.request(question('Why is the Hatter mad?'), tools, layout(5)));
    const usage = {
      inputTokens: u.input_tokens,
      outputTokens: 0,
      cacheReadInputTokens: u.cache_read_input_tokens,
      cacheCreationInputTokens: u.cache_creation_input_tokens,
    };
    rows.push(
      `| ${name} | ${u.cache_read_input_tokens} | ${u.cache_creation_input_tokens} | ${u.input_tokens} | ${(costUsd(MODEL, usage) * 1000).toFixed(3)} |`,
    );
  }
  console.log(`\n## A new reader's first call on a catalogue book (${MODEL}, input side, fake prompt cache)`);
  console.log('| system prompt | cache read | cache write | uncached | $ per 1,000 such calls |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const r of rows) console.log(r);
  console.log(
    '(≈ chars/4 tokens; the real API caches nothing below 1,024 tokens on Sonnet, which this shared prefix is near)',
  );
}

async function main(): Promise<void> {
  const url = new URL(loadDatabaseUrl());
  url.pathname = `/${process.env.BENCH_CATALOGUE_DB ?? 'parley_bench_catalogue'}`;
  await recreateDatabase(url.toString());
  const pool = new Pool({ connectionString: url.toString(), max: 4 });
  try {
    const shelf = new BookShelf(pool);
    const tenant = `tenant-${randomUUID().slice(0, 8)}`;
    await listing(pool, shelf, tenant);
    await search(pool, shelf, tenant);
    firstTurnCost();
  } finally {
    await pool.end();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
