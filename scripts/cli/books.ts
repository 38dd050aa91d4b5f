/**
 * `books list|show|add|delete`: the caller's books, over the HTTP API. `add` uploads the file as
 * multipart (any size up to the book limit), then follows the background ingestion to the end.
 */
import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { Presets, SingleBar } from 'cli-progress';
import { call, type Api } from './api';
import { CliError, EXIT, UsageError } from './errors';
import { dim } from './format';
import { deleteBook, getBook, listBooks, listConversations } from './resources';
import type { Terminal } from './terminal';
import type { Book } from './types';

const POLL_MS = 300;

/** The media types of the formats the API reads, by file extension (the API reads the name too). */
const MEDIA_TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.pdf': 'application/pdf',
  '.epub': 'application/epub+zip',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.xhtml': 'application/xhtml+xml',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

export function bookLine(b: Book): string {
  const status = b.status && b.status !== 'ready' ? ` [${b.status}]` : '';
  const kind = b.visibility === 'catalogue' ? ' [catalogue]' : '';
  const by = b.author ? ` by ${b.author}` : '';
  return `${b.id}  ${b.title}${by}${kind}${status} ${dim(`· ${b.chapters.length} chapters · ${b.chunkCount} passages`)}`;
}

export async function booksList(api: Api, json: boolean): Promise<void> {
  const { items } = await listBooks(api);
  if (json) return console.log(JSON.stringify(items, null, 2));
  if (items.length === 0) return console.log('no books yet: npm run cli -- books add <file>');
  for (const b of items) console.log(bookLine(b));
}

export async function booksShow(api: Api, id: string, json: boolean): Promise<void> {
  const b = await getBook(api, id);
  if (json) return console.log(JSON.stringify(b, null, 2));
  console.log(bookLine(b));
  if (b.error) console.log(`failed: ${b.error.message} (${b.error.code})`);
  for (const c of b.chapters) console.log(`  ${String(c.index).padStart(3)}  ${c.title}`);
}

export async function booksAdd(
  api: Api,
  args: { file: string; title?: string; author?: string; json: boolean; catalogue?: boolean },
): Promise<void> {
  let content: Buffer;
  try {
    content = await readFile(args.file);
  } catch (e) {
    throw new CliError(
      `cannot read ${args.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      EXIT.usage,
    );
  }
  const form = new FormData();
  // the API tells the format from the name, else from the part's media type
  const type = MEDIA_TYPES[extname(args.file).toLowerCase()] ?? 'application/octet-stream';
  form.append('file', new Blob([content], { type }), basename(args.file));
  if (args.title) form.append('title', args.title);
  if (args.author) form.append('author', args.author);
  if (args.catalogue) form.append('visibility', 'catalogue'); // a publisher's token only (403 otherwise)
  const accepted = await call(api, `upload of ${basename(args.file)}`, () =>
    api.client.POST('/v1/books', { body: { file: basename(args.file) }, bodySerializer: () => form }),
  );
  const book = await untilIngested(api, accepted);
  if (book.status === 'failed') {
    throw new CliError(
      `${args.file} was not stored: ${book.error?.message ?? 'ingestion failed'} (${book.error?.code ?? '?'})`,
      EXIT.refused,
    );
  }
  console.log(args.json ? JSON.stringify(book, null, 2) : bookLine(book));
}

/** Polls the book until its ingestion ends, with a progress bar on a terminal. */
async function untilIngested(api: Api, book: Book): Promise<Book> {
  const bar = process.stderr.isTTY
    ? new SingleBar(
        { format: '{phase} [{bar}] {value}/{total} {unit}', stream: process.stderr },
        Presets.shades_classic,
      )
    : undefined;
  bar?.start(0, 0, { phase: 'queued', unit: '' });
  try {
    while (book.status === 'ingesting') {
      await new Promise((r) => setTimeout(r, POLL_MS));
      book = await getBook(api, book.id);
      const p = book.progress;
      if (!bar || !p) continue;
      if (p.phase === 'storing') {
        bar.setTotal(p.chunksTotal ?? 0);
        bar.update(p.chunksWritten, { phase: 'storing', unit: 'passages' });
      } else if (p.phase === 'embedding') {
        bar.setTotal(p.embeddingsTotal ?? 0);
        bar.update(p.embeddingsWritten ?? 0, { phase: 'embedding', unit: 'passages' });
      } else if (p.pagesTotal) {
        bar.setTotal(p.pagesTotal);
        bar.update(p.pagesDone ?? 0, { phase: 'reading', unit: 'pages' });
      } else bar.update(0, { phase: p.phase, unit: '' });
    }
    return book;
  } finally {
    bar?.stop();
  }
}

export async function booksDelete(api: Api, term: Terminal | undefined, id: string, yes: boolean): Promise<void> {
  const book = await getBook(api, id);
  if (!yes) {
    if (!term) throw new UsageError('books delete removes the book and its conversations: add --yes to confirm');
    const { items } = await listConversations(api, id, 100);
    const about = items.length ? ` and its ${items.length}${items.length === 100 ? '+' : ''} conversation(s)` : '';
    const answer = await term.ask(`delete "${book.title}"${about}? [y/N] `);
    if (!answer || !/^y(es)?$/i.test(answer.trim())) return console.log('kept');
  }
  await deleteBook(api, id);
  console.log(`deleted "${book.title}" (${id})`);
}
