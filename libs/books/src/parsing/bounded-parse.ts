import { ChildProcess, fork } from 'node:child_process';
import type { Socket } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BookRejectedError } from '../book.errors';
import { BookFormat, ChapterRef } from '../book.types';
import { ChunkDraft } from '../chunking/chunker';
import { ParseLimits } from './parse-limits';
import { BookMetadata } from './parsed-book';
import { ChildReply, ChildRequest, ParseProgress } from './parse-protocol';

export interface BoundedParseResult {
  chapters: ChapterRef[];
  chunks: ChunkDraft[];
  /** the title and author the book states (EPUB, DOCX, HTML), if any */
  metadata: BookMetadata | null;
}

/** Filled in as the parse runs: for metrics, logs and tests of the bounds. */
export interface ParseStats {
  pid?: number;
  peakRssBytes: number;
  ms: number;
}

const WATCH_MS = 50;

/**
 * The compiled parser script. From dist/ it sits next to this file; under ts-jest (sources)
 * the built copy is used, so `npm run build` comes before the tests, as `npm test` does.
 */
function childScript(): string {
  const here = path.join(__dirname, 'parse-child.js');
  return existsSync(here) ? here : path.resolve(__dirname, '../../../../dist/libs/books/src/parsing/parse-child.js');
}

/** Resident memory of a process from /proc (Linux); null elsewhere or once it is gone. */
export function rssBytes(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** A parser process and the tail of what it wrote to stderr (why it died, if it does). */
interface Parser {
  child: ChildProcess;
  heapMb: number;
  stderr: () => string;
}

function startParser(heapMb: number): Parser {
  const child = fork(childScript(), [], {
    execArgv: [`--max-old-space-size=${heapMb}`],
    serialization: 'advanced', // Buffers and large arrays without JSON
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4096)));
  child.once('error', () => undefined); // a spare that failed to start is found dead when taken
  return { child, heapMb, stderr: () => stderr };
}

/** Whether a spare holds this process open: not while it waits, so a CLI or a test ends when its work does. */
function holdOpen(p: Parser, hold: boolean): void {
  const handles = [p.child, p.child.channel, p.child.stderr as Socket | null];
  for (const h of handles) {
    if (hold) h?.ref();
    else h?.unref();
  }
}

/**
 * One parser process started ahead of the next upload: a process costs Node's own start
 * (60–200 ms on a loaded machine) before it reads a byte, which the next upload, a bomb or a
 * book, then does not wait for. It waits idle (~40 MB) for its one request, and exits with this
 * process (parse-child.ts exits on disconnect).
 */
let spare: Parser | null = null;

function takeParser(heapMb: number): Parser {
  const warm = spare;
  spare = null;
  if (warm && warm.heapMb === heapMb && warm.child.connected && warm.child.exitCode === null) {
    holdOpen(warm, true);
    return warm;
  }
  if (warm && warm.child.exitCode === null) warm.child.kill('SIGKILL');
  return startParser(heapMb);
}

/** Starts the next upload's parser, once this one is done (not meanwhile: it would take CPU from it). */
function warmSpare(heapMb: number): void {
  if (spare) return;
  spare = startParser(heapMb);
  holdOpen(spare, false);
}

/**
 * Parses and chunks an upload in a child process of its own, so a hostile file can only exhaust
 * that process: V8's heap is capped by --max-old-space-size, everything else (inflated buffers
 * live off the heap) by a watchdog that kills the child once its RSS passes parseMaxRssMb, and
 * time by parseTimeoutMs. The child itself stops once the text outgrows the upload (see
 * expansionBound) or the page count passes maxPages. Every refusal is a BookRejectedError with
 * a problem code; the caller's process never holds more than the upload and the chunks.
 */
export function parseBounded(
  format: BookFormat,
  content: Buffer,
  title: string,
  limits: ParseLimits,
  onProgress: (p: ParseProgress) => void = () => undefined,
  stats: ParseStats = { peakRssBytes: 0, ms: 0 },
): Promise<BoundedParseResult> {
  const started = Date.now();
  const parser = takeParser(limits.parseHeapMb);
  const { child } = parser;
  stats.pid = child.pid;

  return new Promise<BoundedParseResult>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearInterval(watchdog);
      clearTimeout(timer);
      stats.ms = Date.now() - started;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      warmSpare(limits.parseHeapMb);
      fn();
    };
    const maxRss = limits.parseMaxRssMb * 1024 * 1024;
    const watchdog = setInterval(() => {
      const rss = child.pid ? rssBytes(child.pid) : null;
      if (rss === null) return;
      stats.peakRssBytes = Math.max(stats.peakRssBytes, rss);
      if (rss > maxRss)
        finish(() =>
          reject(
            new BookRejectedError(
              413,
              `reading the book needed more than ${limits.parseMaxRssMb} MB of memory`,
              'book_too_large_when_expanded',
            ),
          ),
        );
    }, WATCH_MS);
    const timer = setTimeout(
      () =>
        finish(() =>
          reject(
            new BookRejectedError(
              422,
              `reading the book took longer than ${Math.round(limits.parseTimeoutMs / 1000)} s`,
              'book_parse_timeout',
            ),
          ),
        ),
      limits.parseTimeoutMs,
    );
    child.on('message', (msg: ChildReply) => {
      if (msg.type === 'progress') return onProgress(msg);
      if (msg.type === 'done')
        return finish(() => resolve({ chapters: msg.chapters, chunks: msg.chunks, metadata: msg.metadata ?? null }));
      finish(() => reject(new BookRejectedError(msg.status, msg.message, msg.code)));
    });
    child.once('error', (e) => finish(() => reject(e)));
    child.once('close', (code, signal) =>
      finish(() =>
        reject(
          /heap out of memory|Allocation failed/i.test(parser.stderr())
            ? new BookRejectedError(
                413,
                `reading the book needed more than ${limits.parseHeapMb} MB of memory`,
                'book_too_large_when_expanded',
              )
            : new BookRejectedError(
                422,
                `the book cannot be read (parser exited: ${signal ?? code})`,
                'book_parse_failed',
              ),
        ),
      ),
    );
    const req: ChildRequest = { format, content, title, limits };
    child.send(req);
  });
}
