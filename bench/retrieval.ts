/**
 * Retrieval benchmark: ingests the five sample books of data/books/ that have a question set into
 * its own database (parley_bench, recreated on each run) and runs every question of their question
 * sets (data/books/*.qa.jsonl) through search (k = 5). Prints ingest time (ms, MB/s), and for each
 * set recall@5 (a hit is a top-5 passage containing the answer phrase, whitespace collapsed and
 * lower-cased) and search latency p50/p95, listing the misses. Each set is labelled: `tuning` (the
 * search settings were chosen on it) or `held-out` (never used to choose anything); the summary
 * gives the mean recall@5 of each group. time_machine.txt is reserved and has no set.
 *
 *   npm run build && node dist/bench/retrieval.js
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Pool } from 'pg';
import { loadDatabaseUrl } from '../libs/config/src';
import { projectRoot } from '../libs/platform/src/project-root';
import { BooksRepository } from '../libs/books/src/books.repository';
import { BooksService } from '../libs/books/src/books.service';
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

export interface RetrievalReport {
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
  url.pathname = '/parley_bench';
  await recreateDatabase(url.toString());
  const pool = new Pool({ connectionString: url.toString(), max: 4 });
  try {
    const books = new BooksService(new BooksRepository(pool));
    const dataDir = path.join(projectRoot(), 'data/books');

    const report: RetrievalReport = { ingest: [], recallAt5: 0, tuningRecallAt5: 0, heldOutRecallAt5: 0, sets: [] };
    const ids: Record<string, string> = {};
    log('Ingest');
    for (const file of BOOKS) {
      const content = readFileSync(path.join(dataDir, file));
      const started = process.hrtime.bigint();
      const book = await books.ingest(OWNER, { title: file.replace(/\.txt$/, ''), format: 'text', content });
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

    await books.search(null, ids['alice.txt'], 'warm up the connection'); // not timed
    for (const set of QUESTION_SETS) {
      const name = `${set.book}.qa.jsonl`;
      const result = await runQuestions(books, ids[`${set.book}.txt`], name, set.role, path.join(dataDir, name));
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
    return report;
  } finally {
    await pool.end();
  }
}

/** Unweighted mean over the sets of one role (a set of 10 questions counts as much as one of 38). */
function meanRecall(sets: QuestionSetReport[], role: QuestionSetRole): number {
  const of = sets.filter((s) => s.role === role);
  return of.length ? of.reduce((sum, s) => sum + s.recallAt5, 0) / of.length : 0;
}

async function runQuestions(
  books: BooksService,
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
    const { items } = await books.search(null, bookId, q.q, { k: K });
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
