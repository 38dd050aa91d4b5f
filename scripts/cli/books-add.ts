/**
 * `npm run cli -- books add <file> --user <id> [--title …] [--author …]`: ingests a local .txt,
 * .md or .pdf for a user, through the same BooksService the worker uses (without Nest, with the
 * same bounded parser process and BOOK_* limits), shows its progress on a bar (on a terminal),
 * and prints the stored book as JSON.
 */
import { readFile } from 'node:fs/promises';
import { Presets, SingleBar } from 'cli-progress';
import { Pool } from 'pg';
import type { BookLimits } from '@parley/config';
import {
  Book,
  BookProgress,
  BookRejectedError,
  BooksRepository,
  BooksService,
  formatOfFile,
  titleOfFile,
} from '@parley/books';

export interface BooksAddArgs {
  file: string;
  user: string;
  title?: string;
  author?: string;
}

export async function booksAdd(
  args: BooksAddArgs,
  deps: { pool: Pool; print?: (line: string) => void; limits?: BookLimits },
): Promise<Book> {
  const print = deps.print ?? ((line: string) => console.log(line));
  const format = formatOfFile(args.file);
  if (!format) throw new Error(`cannot tell the format of ${args.file}: name it .txt, .md or .pdf`);
  let content: Buffer;
  try {
    content = await readFile(args.file);
  } catch (e) {
    throw new Error(`cannot read ${args.file}: ${(e as Error).message}`);
  }
  const books = new BooksService(new BooksRepository(deps.pool), deps.limits);
  const bar = new SingleBar({ format: '{phase} [{bar}] {value}/{total} {unit}' }, Presets.shades_classic);
  bar.start(0, 0, { phase: 'queued', unit: '' });
  try {
    const book = await books.ingest(
      args.user,
      { title: args.title ?? titleOfFile(args.file), author: args.author, format, content },
      (p) => showProgress(bar, p),
    );
    bar.stop();
    print(JSON.stringify(book, null, 2));
    return book;
  } catch (e) {
    if (e instanceof BookRejectedError) throw new Error(`${args.file} was not stored: ${e.message} (${e.code})`);
    throw e;
  } finally {
    bar.stop();
  }
}

/** Pages while a PDF is read, then passages while they are stored. */
function showProgress(bar: SingleBar, p: BookProgress): void {
  if (p.phase === 'storing') {
    bar.setTotal(p.chunksTotal ?? 0);
    bar.update(p.chunksWritten, { phase: 'storing', unit: 'passages' });
  } else if (p.pagesTotal) {
    bar.setTotal(p.pagesTotal);
    bar.update(p.pagesDone ?? 0, { phase: 'reading', unit: 'pages' });
  } else {
    bar.update(0, { phase: p.phase === 'scanning' ? 'checking' : 'reading', unit: '' });
  }
}
