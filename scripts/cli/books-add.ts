/**
 * `npm run cli -- books add <file> --user <id> [--title …] [--author …]`: ingests a local .txt,
 * .md or .pdf for a user, through the same BooksService the API uses (without Nest), and prints
 * the stored book as JSON.
 */
import { readFile } from 'node:fs/promises';
import { Pool } from 'pg';
import { Book, BookRejectedError, BooksRepository, BooksService, formatOfFile, titleOfFile } from '@parley/books';

export interface BooksAddArgs {
  file: string;
  user: string;
  title?: string;
  author?: string;
}

export async function booksAdd(
  args: BooksAddArgs,
  deps: { pool: Pool; print?: (line: string) => void },
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
  const books = new BooksService(new BooksRepository(deps.pool));
  try {
    const book = await books.ingest(args.user, {
      title: args.title ?? titleOfFile(args.file),
      author: args.author,
      format,
      content,
    });
    print(JSON.stringify(book, null, 2));
    return book;
  } catch (e) {
    if (e instanceof BookRejectedError) throw new Error(`${args.file} was not stored: ${e.message}`);
    throw e;
  }
}
