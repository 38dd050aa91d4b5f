"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.runRetrievalBench = runRetrievalBench;
/**
 * Retrieval benchmark: ingests the shared test books into its own database (parley_bench,
 * recreated on each run) and runs every question of alice.qa.jsonl through search (k = 5).
 * Prints ingest time (ms, MB/s), recall@5 (a hit is a top-5 passage containing the answer
 * phrase, whitespace collapsed and lower-cased) and search latency p50/p95, listing the misses.
 *
 *   npm run build && node dist/bench/retrieval.js
 */
const node_fs_1 = require("node:fs");
const node_path_1 = __importDefault(require("node:path"));
const pg_1 = require("pg");
const src_1 = require("../libs/config/src");
const project_root_1 = require("../libs/platform/src/project-root");
const books_repository_1 = require("../libs/books/src/books.repository");
const books_service_1 = require("../libs/books/src/books.service");
const migrate_1 = require("../scripts/migrate");
const BOOKS = ['alice.txt', 'pride_and_prejudice.txt', 'frankenstein.txt'];
const QUESTIONS = 'alice.qa.jsonl';
const K = 5;
const OWNER = 'bench';
const normalise = (s) => s.replace(/\s+/g, ' ').trim().toLowerCase();
function percentile(sorted, p) {
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
async function recreateDatabase(url) {
    const admin = new URL(url);
    const name = decodeURIComponent(admin.pathname.slice(1));
    admin.pathname = '/postgres';
    const c = new pg_1.Client({ connectionString: admin.toString() });
    await c.connect();
    try {
        await c.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
    }
    finally {
        await c.end();
    }
    await (0, migrate_1.migrate)(url);
}
async function runRetrievalBench(log = console.log) {
    const url = new URL((0, src_1.loadConfig)().databaseUrl);
    url.pathname = '/parley_bench';
    await recreateDatabase(url.toString());
    const pool = new pg_1.Pool({ connectionString: url.toString(), max: 4 });
    try {
        const books = new books_service_1.BooksService(new books_repository_1.BooksRepository(pool));
        const dataDir = node_path_1.default.join((0, project_root_1.projectRoot)(), '../shared/data/books');
        const report = { ingest: [], recallAt5: 0, p50Ms: 0, p95Ms: 0, misses: [] };
        const ids = {};
        log('Ingest');
        for (const file of BOOKS) {
            const content = (0, node_fs_1.readFileSync)(node_path_1.default.join(dataDir, file));
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
            log(`  ${file.padEnd(26)} ${(row.bytes / 1024).toFixed(0).padStart(5)} KiB  ${String(row.chapters).padStart(3)} chapters  ${String(row.chunks).padStart(4)} chunks  ${String(row.ms).padStart(5)} ms  ${row.mbPerSec.toFixed(2)} MB/s`);
        }
        const totalBytes = report.ingest.reduce((s, r) => s + r.bytes, 0);
        const totalMs = report.ingest.reduce((s, r) => s + r.ms, 0);
        log(`  total ${(totalBytes / 1024 / 1024).toFixed(2)} MB in ${totalMs} ms = ${(totalBytes / 1024 / 1024 / (totalMs / 1000)).toFixed(2)} MB/s`);
        const questions = (0, node_fs_1.readFileSync)(node_path_1.default.join(dataDir, QUESTIONS), 'utf8')
            .split('\n')
            .filter((l) => l.trim())
            .map((l) => JSON.parse(l));
        const bookId = ids['alice.txt'];
        await books.search(null, bookId, 'warm up the connection and caches'); // not timed
        const latencies = [];
        let hits = 0;
        for (const q of questions) {
            const started = process.hrtime.bigint();
            const { items } = await books.search(null, bookId, q.q, { k: K });
            latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
            const phrase = normalise(q.must_contain);
            if (items.some((h) => normalise(h.text).includes(phrase)))
                hits++;
            else
                report.misses.push({
                    q: q.q,
                    chapter: q.chapter,
                    must_contain: q.must_contain,
                    got: items.map((h) => h.chapter),
                });
        }
        latencies.sort((a, b) => a - b);
        report.recallAt5 = hits / questions.length;
        report.p50Ms = Math.round(percentile(latencies, 50) * 10) / 10;
        report.p95Ms = Math.round(percentile(latencies, 95) * 10) / 10;
        log(`\nSearch (${QUESTIONS}, k=${K})`);
        log(`  recall@${K}: ${hits}/${questions.length} = ${report.recallAt5.toFixed(2)}`);
        log(`  latency: p50 ${report.p50Ms} ms, p95 ${report.p95Ms} ms`);
        for (const m of report.misses) {
            log(`  miss: ${m.q}\n        expected "${m.must_contain}" (${m.chapter}); got ${m.got.join(' | ') || 'nothing'}`);
        }
        return report;
    }
    finally {
        await pool.end();
    }
}
if (require.main === module) {
    runRetrievalBench().catch((e) => {
        console.error(`retrieval bench failed: ${e.stack ?? e.message}`);
        process.exit(1);
    });
}
//# sourceMappingURL=retrieval.js.map