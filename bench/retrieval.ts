/**
 * Retrieval benchmark: ingests the five sample books of data/books/ that have a question set into
 * its own database (parley_bench, recreated on each run) and runs every question of their question
 * sets (data/books/*.qa.jsonl) through search (k = 5). Prints ingest time (ms, MB/s), and for each
 * set recall@5 (a hit is a top-5 passage containing the answer phrase, whitespace collapsed and
 * lower-cased) and search latency p50/p95, listing the misses. Each set is labelled: `tuning` (the
 * search settings were chosen on it) or `held-out` (never used to choose anything); the summary
 * gives the mean recall@5 of each group. time_machine.txt is reserved and has no set.
 *
 * With an embeddings provider configured by the service's own variables (EMBEDDINGS_*), the books
 * are then embedded and every set runs again through hybrid search, printed beside the lexical
 * rows; without one it says hybrid was not measured. Contextual retrieval (CONTEXTUAL_RETRIEVAL
 * and ANTHROPIC_API_KEY) costs real model calls: its estimate is printed, and it runs only with
 * BENCH_CONTEXTUAL=1 (then lexical and hybrid are measured again over the contextualised books).
 * Nothing here tunes anything: the rows are measurements.
 *
 *   npm run build && node dist/bench/retrieval.js
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Pool } from 'pg';
import {
  ConfigError,
  loadContextualConfig,
  loadDatabaseUrl,
  loadEmbeddingsConfig,
  loadLlmPrices,
} from '../libs/config/src';
import { priceTableWith } from '../libs/agent/src/llm/pricing';
import { projectRoot } from '../libs/platform/src/project-root';
import { BooksRepository } from '../libs/books/src/books.repository';
import { PassagesRepository } from '../libs/books/src/search/passages.repository';
import { BookShelf } from '../libs/books/src/catalogue/book-shelf.repository';
import { BookIngest } from '../libs/books/src/book-ingest';
import { BookSearch } from '../libs/books/src/book-search';
import { BookEmbeddings } from '../libs/books/src/embeddings/book-embeddings';
import { createEmbedder } from '../libs/books/src/embeddings/embedder';
import { EmbeddingsRepository } from '../libs/books/src/embeddings/embeddings.repository';
import { contextsOf } from '../libs/books/src/contexts/book-contexts';
import { describeEstimate } from '../libs/books/src/contexts/contextual-prompt';
import { percentile, recreateDatabase } from './bench-db';

const BOOKS = ['alice.txt', 'pride_and_prejudice.txt', 'frankenstein.txt', 'sherlock_holmes.txt', 'dracula.txt'];
const K = 5;
const OWNER = 'bench';

interface Question {
  q: string;
  chapter: string;
  must_contain: string;
}

/**
 * `tuning`: the search settings were chosen (or checked while choosing them) on these sets.
 * `held-out`: written afterwards from the text alone, never used to choose anything; a change to
 * search is judged on them.
 */
export type QuestionSetRole = 'tuning' | 'held-out';

/** Alice's set comes first: report.recallAt5 is its figure. */
const QUESTION_SETS: { book: string; role: QuestionSetRole }[] = [
  { book: 'alice', role: 'tuning' },
  { book: 'pride_and_prejudice', role: 'tuning' },
  { book: 'frankenstein', role: 'tuning' },
  { book: 'sherlock_holmes', role: 'held-out' },
  { book: 'dracula', role: 'held-out' },
];

export interface QuestionSetReport {
  name: string;
  role: QuestionSetRole;
  questions: number;
  hits: number;
  recallAt5: number;
  /**
   * share of questions with a top-5 passage from the answer's chapter (the `chapter` of the set as
   * Parley titles it); 0 for a book whose headings Parley does not find
   */
  chapterAt5: number;
  p50Ms: number;
  p95Ms: number;
  misses: { q: string; chapter: string; must_contain: string; got: string[] }[];
}

/** One set's figures under another retrieval mode (hybrid, or with contexts). */
export interface ModeRow {
  name: string;
  role: QuestionSetRole;
  hits: number;
  questions: number;
  recallAt5: number;
  p95Ms: number;
}

export interface RetrievalReport {
  /** hybrid rows, or why hybrid was not measured */
  hybrid?: ModeRow[] | { notMeasured: string };
  /** lexical (and hybrid, when configured) rows over contextualised books, or why not measured */
  contextual?: { lexical: ModeRow[]; hybrid: ModeRow[] | null } | { notMeasured: string };
  ingest: { file: string; bytes: number; chapters: number; chunks: number; ms: number; mbPerSec: number }[];
  /** alice.qa.jsonl, the figure the goal is set on */
  recallAt5: number;
  /** mean recall@5 over the tuning sets (each set weighs the same) */
  tuningRecallAt5: number;
  /** mean recall@5 over the held-out sets (each set weighs the same): the figure to judge changes on */
  heldOutRecallAt5: number;
  sets: QuestionSetReport[];
}

const normalise = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();

export async function runRetrievalBench(log: (line: string) => void = console.log): Promise<RetrievalReport> {
  const url = new URL(loadDatabaseUrl());
  // BENCH_RETRIEVAL_DB: another name, so two checkouts on one server do not drop each other's run
  url.pathname = `/${process.env.BENCH_RETRIEVAL_DB ?? 'parley_bench'}`;
  await recreateDatabase(url.toString());
  const pool = new Pool({ connectionString: url.toString(), max: 4 });
  try {
    const bookIngest = new BookIngest(new BooksRepository(pool));
    const lexical = new BookSearch(new PassagesRepository(pool), new BookShelf(pool));
    const dataDir = path.join(projectRoot(), 'data/books');

    const report: RetrievalReport = { ingest: [], recallAt5: 0, tuningRecallAt5: 0, heldOutRecallAt5: 0, sets: [] };
    const ids: Record<string, string> = {};
    log('Ingest');
    for (const file of BOOKS) {
      const content = readFileSync(path.join(dataDir, file));
      const started = process.hrtime.bigint();
      const book = await bookIngest.ingest(OWNER, { title: file.replace(/\.txt$/, ''), format: 'text', content });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      ids[file] = book.id;
      const row = {
        file,
        bytes: content.length,
        chapters: book.chapters.length,
        chunks: book.chunkCount,
        ms: Math.round(ms),
        mbPerSec: Math.round((content.length / 1024 / 1024 / (ms / 1000)) * 100) / 100,
      };
      report.ingest.push(row);
      log(
        `  ${file.padEnd(26)} ${(row.bytes / 1024).toFixed(0).padStart(5)} KiB  ${String(row.chapters).padStart(3)} chapters  ` +
          `${String(row.chunks).padStart(4)} chunks  ${String(row.ms).padStart(5)} ms  ${row.mbPerSec.toFixed(2)} MB/s`,
      );
    }
    const totalBytes = report.ingest.reduce((s, r) => s + r.bytes, 0);
    const totalMs = report.ingest.reduce((s, r) => s + r.ms, 0);
    log(
      `  total ${(totalBytes / 1024 / 1024).toFixed(2)} MB in ${totalMs} ms = ${(totalBytes / 1024 / 1024 / (totalMs / 1000)).toFixed(2)} MB/s`,
    );

    await lexical.search(null, ids['alice.txt'], 'warm up the connection'); // not timed
    for (const set of QUESTION_SETS) {
      const name = `${set.book}.qa.jsonl`;
      const result = await runQuestions(lexical, ids[`${set.book}.txt`], name, set.role, path.join(dataDir, name));
      report.sets.push(result);
      log(`\nSearch ${name} (${set.role}, ${set.book}.txt, k=${K})`);
      log(`  recall@${K}: ${result.hits}/${result.questions} = ${result.recallAt5.toFixed(2)}`);
      log(`  answer's chapter in top ${K}: ${result.chapterAt5.toFixed(2)}`);
      log(`  latency: p50 ${result.p50Ms} ms, p95 ${result.p95Ms} ms`);
      for (const m of result.misses) {
        log(
          `  miss: ${m.q}\n        expected "${m.must_contain}" (${m.chapter}); got ${m.got.join(' | ') || 'nothing'}`,
        );
      }
    }
    report.recallAt5 = report.sets[0].recallAt5;
    report.tuningRecallAt5 = meanRecall(report.sets, 'tuning');
    report.heldOutRecallAt5 = meanRecall(report.sets, 'held-out');

    log(`\nSummary (recall@${K}; answer's chapter in top ${K}; latency p50 / p95)`);
    for (const r of report.sets) {
      log(
        `  ${r.role.padEnd(8)}  ${r.name.padEnd(30)} ${`${r.hits}/${r.questions}`.padStart(5)} = ${r.recallAt5.toFixed(2)}` +
          `   ${r.chapterAt5.toFixed(2)}   ${r.p50Ms} / ${r.p95Ms} ms`,
      );
    }
    log(`  mean recall@${K}, tuning sets:   ${report.tuningRecallAt5.toFixed(2)}`);
    log(`  mean recall@${K}, held-out sets: ${report.heldOutRecallAt5.toFixed(2)}`);

    const embeddings = hybridEmbeddings(pool);
    if ('notMeasured' in embeddings) {
      report.hybrid = embeddings;
      log(`\nHybrid: not measured (${embeddings.notMeasured})`);
    } else {
      log(`\nHybrid (${embeddings.model}): embedding the books`);
      for (const file of BOOKS) await embeddings.embedBook(ids[file]);
      const hybrid = new BookSearch(new PassagesRepository(pool), new BookShelf(pool), embeddings);
      report.hybrid = await modeRows(hybrid, ids, dataDir);
      printBeside(log, 'hybrid', report.sets, report.hybrid);
    }
    report.contextual = await measureContextual(log, pool, ids, dataDir, report.sets, embeddings);
    return report;
  } finally {
    await pool.end();
  }
}

/** The embeddings of the environment (the service's variables), or why there are none. */
function hybridEmbeddings(pool: Pool): BookEmbeddings | { notMeasured: string } {
  const embedder = createEmbedder(loadEmbeddingsConfig());
  if (!embedder)
    return {
      notMeasured:
        'no embeddings provider is configured: EMBEDDINGS_PROVIDER=none; set EMBEDDINGS_PROVIDER (and its key or base URL) as for the service',
    };
  return new BookEmbeddings(embedder, new EmbeddingsRepository(pool));
}

/** Every set through `BookSearch.search`, reduced to recall@5 and p95. */
async function modeRows(bookSearch: BookSearch, ids: Record<string, string>, dataDir: string): Promise<ModeRow[]> {
  const rows: ModeRow[] = [];
  for (const set of QUESTION_SETS) {
    const name = `${set.book}.qa.jsonl`;
    const r = await runQuestions(bookSearch, ids[`${set.book}.txt`], name, set.role, path.join(dataDir, name));
    rows.push({ name, role: r.role, hits: r.hits, questions: r.questions, recallAt5: r.recallAt5, p95Ms: r.p95Ms });
  }
  return rows;
}

function printBeside(log: (line: string) => void, label: string, lexical: QuestionSetReport[], other: ModeRow[]) {
  log(`  ${''.padEnd(8)}  ${'set'.padEnd(30)} ${'lexical recall@5 / p95'.padEnd(26)} ${label} recall@${K} / p95`);
  for (const o of other) {
    const l = lexical.find((x) => x.name === o.name)!;
    log(
      `  ${o.role.padEnd(8)}  ${o.name.padEnd(30)} ${`${l.hits}/${l.questions} = ${l.recallAt5.toFixed(2)} / ${l.p95Ms} ms`.padEnd(26)} ` +
        `${o.hits}/${o.questions} = ${o.recallAt5.toFixed(2)} / ${o.p95Ms} ms`,
    );
  }
  for (const role of ['tuning', 'held-out'] as const) {
    log(
      `  mean recall@${K}, ${role} sets: lexical ${meanRecall(lexical, role).toFixed(2)}, ${label} ${meanRecall(other, role).toFixed(2)}`,
    );
  }
}

/**
 * Contextual retrieval, measured only when configured and asked for (BENCH_CONTEXTUAL=1): it
 * calls a real model for every passage of five books. Prints the cost estimate in any case.
 */
async function measureContextual(
  log: (line: string) => void,
  pool: Pool,
  ids: Record<string, string>,
  dataDir: string,
  lexical: QuestionSetReport[],
  embeddings: BookEmbeddings | { notMeasured: string },
): Promise<RetrievalReport['contextual']> {
  let config;
  let contexts;
  try {
    config = loadContextualConfig();
    if (!config) return notMeasured(log, 'no LLM configured for it: CONTEXTUAL_RETRIEVAL is off');
    // the benchmark spends on no reader's budget; LLM_PRICES names the model's provider and price
    contexts = contextsOf(config, pool, null, priceTableWith(loadLlmPrices()));
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return notMeasured(log, e.message.replace(/\s+/g, ' '));
  }
  log(`\nContextual retrieval (${config.model}): estimate`);
  for (const file of BOOKS) log(`  ${file.padEnd(26)} ${describeEstimate(await contexts.estimate(ids[file]))}`);
  if (process.env.BENCH_CONTEXTUAL !== '1')
    return notMeasured(log, 'it calls the model for every passage; set BENCH_CONTEXTUAL=1 to spend the estimate above');
  for (const file of BOOKS) {
    const { state } = await contexts.contextualizeBook(ids[file]);
    log(`  ${file.padEnd(26)} contexts written, $${state.usage.usd.toFixed(4)}`);
  }
  const withContexts = await modeRows(new BookSearch(new PassagesRepository(pool), new BookShelf(pool)), ids, dataDir);
  printBeside(log, 'contextual lexical', lexical, withContexts);
  if ('notMeasured' in embeddings) return { lexical: withContexts, hybrid: null };
  for (const file of BOOKS) await embeddings.embedBook(ids[file]); // the passages that gained a context
  const hybrid = await modeRows(
    new BookSearch(new PassagesRepository(pool), new BookShelf(pool), embeddings),
    ids,
    dataDir,
  );
  printBeside(log, 'contextual hybrid', lexical, hybrid);
  return { lexical: withContexts, hybrid };
}

function notMeasured(log: (line: string) => void, why: string) {
  log(`\nContextual retrieval: not measured (${why})`);
  return { notMeasured: why };
}

/** Unweighted mean over the sets of one role (a set of 10 questions counts as much as one of 38). */
function meanRecall(sets: Array<Pick<ModeRow, 'role' | 'recallAt5'>>, role: QuestionSetRole): number {
  const of = sets.filter((s) => s.role === role);
  return of.length ? of.reduce((sum, s) => sum + s.recallAt5, 0) / of.length : 0;
}

async function runQuestions(
  bookSearch: BookSearch,
  bookId: string,
  name: string,
  role: QuestionSetRole,
  file: string,
): Promise<QuestionSetReport> {
  const questions = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Question);
  const latencies: number[] = [];
  const misses: QuestionSetReport['misses'] = [];
  let chapterHits = 0;
  for (const q of questions) {
    const started = process.hrtime.bigint();
    const { items } = await bookSearch.search(null, bookId, q.q, { k: K });
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (items.some((h) => h.chapter === q.chapter)) chapterHits++;
    const phrase = normalise(q.must_contain);
    if (!items.some((h) => normalise(h.text).includes(phrase))) {
      misses.push({ q: q.q, chapter: q.chapter, must_contain: q.must_contain, got: items.map((h) => h.chapter) });
    }
  }
  latencies.sort((a, b) => a - b);
  const hits = questions.length - misses.length;
  return {
    name,
    role,
    questions: questions.length,
    hits,
    recallAt5: hits / questions.length,
    chapterAt5: chapterHits / questions.length,
    p50Ms: Math.round(percentile(latencies, 50) * 10) / 10,
    p95Ms: Math.round(percentile(latencies, 95) * 10) / 10,
    misses,
  };
}

if (require.main === module) {
  runRetrievalBench().catch((e: Error) => {
    console.error(`retrieval bench failed: ${e.stack ?? e.message}`);
    process.exit(1);
  });
}
