/**
 * The bounded parser process (libs/books/src/parsing/bounded-parse.ts) against generated
 * hostile files: each is refused, or parsed, within a time and a memory bound. Uses the
 * compiled parser script in dist/ (`npm run build` first, as `npm test` does).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import {
  BookFormat,
  BookRejectedError,
  DEFAULT_PARSE_LIMITS,
  parseBounded,
  ParseLimits,
  ParseStats,
} from '@parley/books';
import { projectRoot } from '@parley/platform';
import { waitFor } from '../support/wait-for';
import { emptyPagesPdf, honestBook, nestedListsMarkdown, pdfBomb, singleLineText } from '../support/hostile-books';
import * as books from '../support/book-fixtures';

const MiB = 1024 * 1024;

async function parse(format: BookFormat, content: Buffer, limits: Partial<ParseLimits> = {}) {
  const stats: ParseStats = { peakRssBytes: 0, ms: 0 };
  const result = await parseBounded(format, content, 'T', { ...DEFAULT_PARSE_LIMITS, ...limits }, undefined, stats)
    .then((r) => ({ chunks: r.chunks.length, chapters: r.chapters.length }))
    .catch((e: unknown) => (e instanceof BookRejectedError ? { code: e.code, message: e.message } : { thrown: e }));
  return { result, stats };
}

describe('bounded book parsing', () => {
  it('starts the parser process on the parser alone: no package is loaded before the upload arrives', () => {
    // each upload forks a parser: the config's schema (zod) and Nest cost it ~300 ms and ~480
    // modules before it reads a byte, which made three bombs wait seconds for their refusal
    const script = path.join(projectRoot(), 'dist/libs/books/src/parsing/parse-child.js');
    const list = `require(${JSON.stringify(script)}); console.log(JSON.stringify(Object.keys(require.cache)))`;
    const loaded = JSON.parse(execFileSync(process.execPath, ['-e', list], { encoding: 'utf8' })) as string[];
    expect(loaded.filter((f) => f.includes('node_modules'))).toEqual([]);
    expect(loaded.length).toBeLessThan(30);
  });

  it('leaves one parser waiting for the next upload, which holds its parent open for nothing and exits with it', async () => {
    // a process that parses one book, lists its children (the waiting parser) and ends by itself
    const dist = path.join(projectRoot(), 'dist/libs/books/src');
    const script = `
      const { parseBounded } = require(${JSON.stringify(`${dist}/parsing/bounded-parse.js`)});
      const { DEFAULT_PARSE_LIMITS } = require(${JSON.stringify(`${dist}/book-ingest.js`)});
      const fs = require('node:fs');
      const children = () => fs.readdirSync('/proc/self/task').flatMap((t) =>
        fs.readFileSync('/proc/self/task/' + t + '/children', 'latin1').trim().split(/\\s+/).filter(Boolean));
      parseBounded('text', Buffer.from('Chapter 1\\n\\nA short book.\\n'), 'T', DEFAULT_PARSE_LIMITS).then(() => {
        // the parser that read the book is killed at once, and gone within moments
        const until = Date.now() + 5000;
        (function settled() {
          const now = children();
          if (now.length <= 1 || Date.now() > until) console.log(JSON.stringify(now.map(Number)));
          else setTimeout(settled, 20);
        })();
      });`;
    const waiting = JSON.parse(
      execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 }),
    ) as number[];
    expect(waiting).toHaveLength(1);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor('the waiting parser to exit with its parent', () => !alive(waiting[0]), 10_000, 50);
  });

  it('refuses a PDF whose content stream inflates to 400 MiB in about a second, before pdf.js inflates it', async () => {
    const bomb = pdfBomb(400);
    expect(bomb.length).toBeLessThan(1 * MiB);
    const { result, stats } = await parse('pdf', bomb);
    expect(result).toEqual({
      code: 'book_too_large_when_expanded',
      message: expect.stringMatching(/expands to more than/),
    });
    expect(stats.ms).toBeLessThan(10_000);
    expect(stats.peakRssBytes).toBeLessThan(DEFAULT_PARSE_LIMITS.parseMaxRssMb * MiB);
  });

  it('refuses hostile EPUBs and Word documents in the parser process, each in about a second and within the memory bound', async () => {
    const hostile: [BookFormat, () => Promise<Buffer>, string][] = [
      ['epub', () => books.zipBombEpub(256), 'book_zip_bomb'],
      ['epub', () => books.lyingZipBombEpub(256), 'book_zip_bomb'],
      ['epub', () => books.manyEntriesEpub(), 'book_zip_bomb'],
      ['epub', () => books.pathTraversalEpub(), 'book_zip_unsafe_path'],
      ['epub', books.billionLaughsEpub, 'book_xml_entities'],
      ['epub', books.externalEntityEpub, 'book_xml_entities'],
      ['epub', books.encryptedEpub, 'book_encrypted'],
      ['docx', () => books.zipBombDocx(256), 'book_zip_bomb'],
      ['docx', books.billionLaughsDocx, 'book_xml_entities'],
    ];
    for (const [format, make, code] of hostile) {
      const { result, stats } = await parse(format, await make());
      expect({ code, result }).toEqual({ code, result: { code, message: expect.any(String) } });
      expect(stats.ms).toBeLessThan(10_000);
      expect(stats.peakRssBytes).toBeLessThan(DEFAULT_PARSE_LIMITS.parseMaxRssMb * MiB);
    }
  }, 120_000);

  it('reads an EPUB in the parser process, with the title and author it states', async () => {
    const r = await parseBounded('epub', await books.epub3Book(), 'upload', DEFAULT_PARSE_LIMITS);
    expect(r.chapters).toEqual(books.EPUB3_FACTS.chapters);
    expect(r.metadata).toEqual({ title: books.EPUB3_FACTS.title, author: books.EPUB3_FACTS.author });
    expect(r.chunks.map((c) => c.chapter)).toContain('Chapter 3: The River');
  });

  it('kills the parser once its memory passes the watchdog limit, whatever the other bounds let through', async () => {
    // the expansion bounds opened wide: pdf.js inflates the stream and the RSS watchdog stops it
    const { result, stats } = await parse('pdf', pdfBomb(400), {
      maxExpansionRatio: 100_000,
      maxExpandedBytes: 4096 * MiB,
      parseMaxRssMb: 200,
    });
    expect(result).toEqual({
      code: 'book_too_large_when_expanded',
      message: 'reading the book needed more than 200 MB of memory',
    });
    // sampled every 50 ms: the process is killed soon after it passes the limit
    expect(stats.peakRssBytes).toBeGreaterThan(200 * MiB);
    expect(stats.peakRssBytes).toBeLessThan(1024 * MiB);
  });

  it('refuses a PDF of more pages than allowed at once, and stops a slow one at the wall clock', async () => {
    const many = await parse('pdf', emptyPagesPdf(6_000));
    expect(many.result).toMatchObject({ code: 'book_too_many_pages' });
    expect(many.stats.ms).toBeLessThan(15_000);
    const slow = await parse('pdf', emptyPagesPdf(3_000), { parseTimeoutMs: 1_000 });
    expect(slow.result).toMatchObject({ code: 'book_parse_timeout' });
    expect(slow.stats.ms).toBeLessThan(3_000);
  });

  it('reads thousands of empty pages to the end and finds no text', async () => {
    const { result, stats } = await parse('pdf', emptyPagesPdf(2_000));
    expect(result).toMatchObject({ code: 'book_no_text' });
    expect(stats.ms).toBeLessThan(60_000);
    expect(stats.peakRssBytes).toBeLessThan(400 * MiB);
  }, 90_000);

  it('parses 20 MB of text on a single line within its bounds', async () => {
    const { result, stats } = await parse('text', Buffer.from(singleLineText(20)));
    expect(result).toMatchObject({ chapters: 1, chunks: expect.any(Number) });
    expect(stats.ms).toBeLessThan(60_000);
    expect(stats.peakRssBytes).toBeLessThan(DEFAULT_PARSE_LIMITS.parseMaxRssMb * MiB);
  }, 90_000);

  it('parses Markdown lists nested a thousand deep', async () => {
    const { result, stats } = await parse('markdown', Buffer.from(nestedListsMarkdown()));
    expect(result).toMatchObject({ chunks: expect.any(Number) });
    expect(stats.ms).toBeLessThan(30_000);
    expect(stats.peakRssBytes).toBeLessThan(400 * MiB);
  });

  it('parses an honest 19 MB book into its 60 chapters', async () => {
    const { result, stats } = await parse('text', Buffer.from(honestBook(19)));
    expect(result).toMatchObject({ chapters: 60 });
    expect(stats.ms).toBeLessThan(60_000);
    expect(stats.peakRssBytes).toBeLessThan(DEFAULT_PARSE_LIMITS.parseMaxRssMb * MiB);
  }, 90_000);
});
