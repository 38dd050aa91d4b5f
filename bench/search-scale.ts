/**
 * Search at library scale: does one reader's search slow down when the library holds 1,000 books?
 *
 * In its own database (parley_bench_scale, recreated on each run) it ingests alice.txt and times
 * search for alice.qa.jsonl's questions (k = 5, each question REPEAT times, through
 * BooksRepository.search: the same prepared statement as the service) with alice the only book;
 * then adds the other sample books and bulk-copies them (SQL INSERT … SELECT, new ids and owners)
 * to SCALE_BOOKS books in all, and times the same questions again. Each library is measured with
 * the library-wide indexes (before migration 1732240000011) and with the per-book ones (after);
 * each run also prints
 * EXPLAIN (ANALYZE, BUFFERS) of one question.
 *
 *   npm run bench:scale                     (SCALE_BOOKS=1000 REPEAT=5 by default)
 *   SCALE_BOOKS=50 PLANS=full npm run bench:scale
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Pool } from 'pg';
import { loadDatabaseUrl } from '../libs/config/src';
import { projectRoot } from '../libs/platform/src/project-root';
import { BooksRepository } from '../libs/books/src/books.repository';
import { PassagesRepository } from '../libs/books/src/search/passages.repository';
import { BookIngest } from '../libs/books/src/book-ingest';
import { queryText } from '../libs/books/src/search/query-text';
import { SEARCH_SQL, searchParams } from '../libs/books/src/search/search-query';
import { percentile, recreateDatabase } from './bench-db';

const SCALE_BOOKS = Number(process.env.SCALE_BOOKS ?? 1000);
const REPEAT = Number(process.env.REPEAT ?? 5);
const K = 5;
const TARGET = 'alice.txt';
const OTHERS = [
  'pride_and_prejudice.txt',
  'frankenstein.txt',
  'dracula.txt',
  'sherlock_holmes.txt',
  'time_machine.txt',
];
/** the question EXPLAIN shows: a misspelt name, so the trigram lookup on book_terms runs too */
const EXPLAINED = 'What did the Cheshre Cat say about everyone being mad?';

type Phase = 'before' | 'after';

/**
 * The search indexes before migration 1732240000011 (library-wide) and after it (per book), as
 * idempotent SQL so the bench can switch between them on a loaded library.
 */
const INDEXES: Record<Phase, string> = {
  before: `CREATE INDEX IF NOT EXISTS book_chunks_tsv ON book_chunks USING gin (tsv);
           CREATE INDEX IF NOT EXISTS book_terms_trgm ON book_terms USING gin (lexeme gin_trgm_ops);
           DROP INDEX IF EXISTS book_chunks_book_tsv, book_terms_book_trgm;`,
  after: `CREATE INDEX IF NOT EXISTS book_chunks_book_tsv ON book_chunks USING gin (book_id, tsv);
          CREATE INDEX IF NOT EXISTS book_terms_book_trgm ON book_terms USING gin (book_id, lexeme gin_trgm_ops);
          DROP INDEX IF EXISTS book_chunks_tsv, book_terms_trgm;`,
};

async function setIndexes(pool: Pool, phase: Phase, current: { phase: Phase }): Promise<number> {
  if (current.phase === phase) return 0;
  const started = Date.now();
  const c = await pool.connect();
  try {
    await c.query(`SET maintenance_work_mem = '256MB'`);
    await c.query(INDEXES[phase]);
    await c.query('ANALYZE book_chunks; ANALYZE book_terms; ANALYZE books');
  } finally {
    c.release();
  }
  current.phase = phase;
  return Date.now() - started;
}

async function timeQuestions(passages: PassagesRepository, bookId: string, questions: string[]) {
  for (const q of questions.slice(0, 3)) await passages.search(bookId, queryText(q), K, null); // warm up
  const ms: number[] = [];
  for (let r = 0; r < REPEAT; r++) {
    for (const q of questions) {
      const started = process.hrtime.bigint();
      await passages.search(bookId, queryText(q), K, null);
      ms.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
  ms.sort((a, b) => a - b);
  return { n: ms.length, p50: +percentile(ms, 50).toFixed(1), p95: +percentile(ms, 95).toFixed(1) };
}

async function explain(pool: Pool, bookId: string): Promise<string> {
  const { rows } = await pool.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE, BUFFERS) ${SEARCH_SQL}`,
    searchParams(bookId, queryText(EXPLAINED), null, K),
  );
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

/** The plan lines that show how book_chunks and book_terms are read, and the totals. */
function excerpt(plan: string): string {
  const lines = plan.split('\n');
  const keep = new Set<number>();
  lines.forEach((l, i) => {
    if (/Scan.* on (book_chunks|book_terms)|Execution Time|Planning Time/.test(l)) {
      for (let j = i; j < Math.min(lines.length, i + 5); j++) {
        if (j > i && /->|CTE /.test(lines[j])) break;
        keep.add(j);
      }
    }
  });
  return [...keep]
    .sort((a, b) => a - b)
    .map((i) => lines[i])
    .join('\n');
}

/** Copies of the ingested books, new ids and owners, until the library holds `total` books. */
async function fillLibrary(pool: Pool, sources: string[], total: number): Promise<number> {
  const started = Date.now();
  const c = await pool.connect();
  try {
    const have = Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM books')).rows[0].n);
    const copies = total - have;
    if (copies <= 0) return 0;
    await c.query('BEGIN');
    await c.query(
      `CREATE TEMP TABLE copies ON COMMIT DROP AS
       SELECT gen_random_uuid() AS id, ($1::uuid[])[1 + (g % array_length($1::uuid[], 1))] AS src, 'reader-' || g AS owner
       FROM generate_series(1, $2::int) AS g`,
      [sources, copies],
    );
    await c.query(
      `INSERT INTO books (id, owner_id, title, author, format, chapters, chunk_count, avg_chunk_bytes, size_bytes, status)
       SELECT cp.id, cp.owner, b.title || ' (copy)', b.author, b.format, b.chapters, b.chunk_count, b.avg_chunk_bytes,
              b.size_bytes, b.status
       FROM copies cp JOIN books b ON b.id = cp.src`,
    );
    await c.query(
      `INSERT INTO book_chunks (book_id, ordinal, chapter_index, chapter, section, page, text)
       SELECT cp.id, ch.ordinal, ch.chapter_index, ch.chapter, ch.section, ch.page, ch.text
       FROM copies cp JOIN book_chunks ch ON ch.book_id = cp.src`,
    );
    await c.query(
      `INSERT INTO book_terms (book_id, lexeme, ndoc)
       SELECT cp.id, t.lexeme, t.ndoc FROM copies cp JOIN book_terms t ON t.book_id = cp.src`,
    );
    await c.query('COMMIT');
  } catch (e) {
    await c.query('ROLLBACK');
    throw e;
  } finally {
    c.release();
  }
  await pool.query('VACUUM ANALYZE book_chunks');
  await pool.query('VACUUM ANALYZE book_terms');
  await pool.query('ANALYZE books');
  return Date.now() - started;
}

export async function runSearchScaleBench(log: (line: string) => void = console.log): Promise<void> {
  const url = new URL(loadDatabaseUrl());
  url.pathname = '/parley_bench_scale';
  await recreateDatabase(url.toString());
  // one connection: the prepared statement and its plan cache behave as in one API process
  const pool = new Pool({ connectionString: url.toString(), max: 1 });
  try {
    const repo = new BooksRepository(pool);
    const passages = new PassagesRepository(pool);
    const bookIngest = new BookIngest(repo);
    const dataDir = path.join(projectRoot(), 'data/books');
    const questions = readFileSync(path.join(dataDir, 'alice.qa.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => (JSON.parse(l) as { q: string }).q);
    const ingest = async (file: string, owner: string) =>
      (
        await bookIngest.ingest(owner, {
          title: file.replace(/\.txt$/, ''),
          format: 'text',
          content: readFileSync(path.join(dataDir, file)),
        })
      ).id;

    const alice = await ingest(TARGET, 'bench-0');
    const state = { phase: 'after' as Phase }; // migrated: per-book indexes
    const rows: string[] = [];
    const plans: string[] = [];
    const measure = async (library: string) => {
      for (const phase of ['before', 'after'] as Phase[]) {
        const swapMs = await setIndexes(pool, phase, state);
        const t = await timeQuestions(passages, alice, questions);
        const plan = await explain(pool, alice);
        const exec = /Execution Time: ([\d.]+)/.exec(plan)?.[1];
        rows.push(
          `| ${library} | ${phase === 'before' ? 'library-wide (before)' : 'per book (after)'} | ${t.n} | ${t.p50} | ${t.p95} | ${exec} |`,
        );
        log(
          `${library}, ${phase}: p50 ${t.p50} ms, p95 ${t.p95} ms over ${t.n} searches (indexes built in ${swapMs} ms)`,
        );
        plans.push(`-- ${library}, ${phase}\n${process.env.PLANS === 'full' ? plan : excerpt(plan)}`);
      }
    };

    await measure('1 book');

    const sources = [alice];
    for (const [i, file] of OTHERS.entries()) sources.push(await ingest(file, `bench-${i + 1}`));
    // bulk-load without the search indexes, build them afterwards (as a restore would)
    await pool.query(
      'DROP INDEX IF EXISTS book_chunks_book_tsv, book_terms_book_trgm, book_chunks_tsv, book_terms_trgm',
    );
    const fillMs = await fillLibrary(pool, sources, SCALE_BOOKS);
    const size = (
      await pool.query<{ books: string; chunks: string; terms: string; mb: string }>(
        `SELECT (SELECT count(*) FROM books) AS books, (SELECT count(*) FROM book_chunks) AS chunks,
                (SELECT count(*) FROM book_terms) AS terms,
                round(pg_total_relation_size('book_chunks') / 1048576.0) AS mb`,
      )
    ).rows[0];
    log(
      `library: ${size.books} books, ${size.chunks} chunks, ${size.terms} terms, book_chunks ${size.mb} MB (unindexed); loaded in ${fillMs} ms`,
    );
    state.phase = 'after'; // makes the first measurement build its indexes
    await measure(`${size.books} books`);

    log('\n| library | search indexes | searches | p50 ms | p95 ms | EXPLAIN ANALYZE ms |');
    log('| --- | --- | --- | --- | --- | --- |');
    for (const r of rows) log(r);
    log(`\nEXPLAIN (ANALYZE, BUFFERS) of "${EXPLAINED}"`);
    for (const p of plans) log(`\n${p}`);
  } finally {
    await pool.end();
  }
}

if (require.main === module) {
  runSearchScaleBench().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
