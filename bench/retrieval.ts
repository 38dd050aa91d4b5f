/**
 * Retrieval benchmark: ingests three sample books of data/books/ into its own database
 * (parley_bench, recreated on each run) and runs every question of their question sets
 * (data/books/*.qa.jsonl) through search (k = 5). Prints ingest time (ms, MB/s), recall@5 (a hit is a top-5
 * passage containing the answer phrase, whitespace collapsed and lower-cased) and search latency
 * p50/p95, listing the misses.
 *
 *   npm run build && node dist/bench/retrieval.js
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Pool } from 'pg';
import { loadDatabaseUrl } from '../libs/config/src';
import { projectRoot } from '../libs/platform/src/project-root';
import { BooksRepository } from '../libs/books/src/books.repository';
import { BooksService } from '../libs/books/src/books.service';
import { migrate } from '../scripts/migrate';

const BOOKS = ['alice.txt', 'pride_and_prejudice.txt', 'frankenstein.txt'];
const K = 5;
const OWNER = 'bench';

interface Question {
  q: string;
  chapter: string;
  must_contain: string;
}

/** The question sets: alice's is the target; the other two were written for this bench as a check. */
const QUESTION_SETS = (dataDir: string) => [
  { name: 'alice.qa.jsonl', book: 'alice.txt', file: path.join(dataDir, 'alice.qa.jsonl') },
  {
    name: 'pride_and_prejudice.qa.jsonl',
    book: 'pride_and_prejudice.txt',
    file: path.join(dataDir, 'pride_and_prejudice.qa.jsonl'),
  },
  { name: 'frankenstein.qa.jsonl', book: 'frankenstein.txt', file: path.join(dataDir, 'frankenstein.qa.jsonl') },
];

export interface QuestionSetReport {
  name: string;
  questions: number;
  hits: number;
  recallAt5: number;
  p50Ms: number;
  p95Ms: number;
  misses: { q: string; chapter: string; must_contain: string; got: string[] }[];
}

export interface RetrievalReport {
  ingest: { file: string; bytes: number; chapters: number; chunks: number; ms: number; mbPerSec: number }[];
  /** alice.qa.jsonl, the figure the goal is set on */
  recallAt5: number;
  sets: QuestionSetReport[];
}

const normalise = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function recreateDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  const name = decodeURIComponent(admin.pathname.slice(1));
  admin.pathname = '/postgres';
  const c = new Client({ connectionString: admin.toString() });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await c.end();
  }
  await migrate(url);
}

export async function runRetrievalBench(log: (line: string) => void = console.log): Promise<RetrievalReport> {
  const url = new URL(loadDatabaseUrl());
  url.pathname = '/parley_bench';
  await recreateDatabase(url.toString());
  const pool = new Pool({ connectionString: url.toString(), max: 4 });
  try {
    const books = new BooksService(new BooksRepository(pool));
    const dataDir = path.join(projectRoot(), 'data/books');

    const report: RetrievalReport = { ingest: [], recallAt5: 0, sets: [] };
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
    for (const set of QUESTION_SETS(dataDir)) {
      const result = await runQuestions(books, ids[set.book], set.name, set.file);
      report.sets.push(result);
      log(`\nSearch ${set.name} (${set.book}, k=${K})`);
      log(`  recall@${K}: ${result.hits}/${result.questions} = ${result.recallAt5.toFixed(2)}`);
      log(`  latency: p50 ${result.p50Ms} ms, p95 ${result.p95Ms} ms`);
      for (const m of result.misses) {
        log(
          `  miss: ${m.q}\n        expected "${m.must_contain}" (${m.chapter}); got ${m.got.join(' | ') || 'nothing'}`,
        );
      }
    }
    report.recallAt5 = report.sets[0].recallAt5;
    return report;
  } finally {
    await pool.end();
  }
}

async function runQuestions(
  books: BooksService,
  bookId: string,
  name: string,
  file: string,
): Promise<QuestionSetReport> {
  const questions = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Question);
  const latencies: number[] = [];
  const misses: QuestionSetReport['misses'] = [];
  for (const q of questions) {
    const started = process.hrtime.bigint();
    const { items } = await books.search(null, bookId, q.q, { k: K });
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    const phrase = normalise(q.must_contain);
    if (!items.some((h) => normalise(h.text).includes(phrase))) {
      misses.push({ q: q.q, chapter: q.chapter, must_contain: q.must_contain, got: items.map((h) => h.chapter) });
    }
  }
  latencies.sort((a, b) => a - b);
  const hits = questions.length - misses.length;
  return {
    name,
    questions: questions.length,
    hits,
    recallAt5: hits / questions.length,
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
