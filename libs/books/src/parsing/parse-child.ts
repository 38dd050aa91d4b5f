/**
 * The parser process: `fork`ed by bounded-parse.ts for one upload, under --max-old-space-size,
 * an RSS watchdog and a wall clock kept by the parent. Receives {format, content, title,
 * limits}, answers with progress messages and then one `done` (chapter list and chunks) or
 * `refused` message, and exits. Nothing here touches the database or the network.
 */
import { BookRejectedError } from '../book.errors';
import { chunkBook } from '../chunking/chunker';
import { inflatedStreamBytes } from './inflate-guard';
import { looksLikePdf, parseBook } from './parse-book';
import { expansionBound } from './parse-limits';
import { extractPdfBounded, tooMuchText } from './pdf-direct';
import { ChildReply, ChildRequest } from './parse-protocol';

const send = (msg: ChildReply) => new Promise<void>((resolve) => process.send!(msg, () => resolve()));

async function parse(req: ChildRequest): Promise<ChildReply> {
  const content = Buffer.from(req.content.buffer, req.content.byteOffset, req.content.byteLength);
  const bound = expansionBound(content.length, req.limits);
  if (req.format === 'pdf' && looksLikePdf(content)) {
    await send({ type: 'progress', phase: 'scanning' });
    if ((await inflatedStreamBytes(content, bound)) > bound) throw tooMuchText(bound);
  }
  let last = 0;
  const book = await parseBook(req.format, content, { fallbackTitle: req.title, maxExpandedBytes: bound }, (pdf) =>
    extractPdfBounded(pdf, {
      maxPages: req.limits.maxPages,
      maxTextChars: bound,
      onPage: (done, total) => {
        // a message per page would be thousands for a long PDF: at most ~10 a second
        if (Date.now() - last < 100 && done < total) return;
        last = Date.now();
        void send({ type: 'progress', phase: 'parsing', pagesDone: done, pagesTotal: total });
      },
    }),
  );
  const chunks = chunkBook(book.chapters);
  return {
    type: 'done',
    chapters: book.chapters.map((c) => ({ index: c.index, title: c.title })),
    chunks,
    metadata: book.metadata ?? null,
  };
}

process.once('disconnect', () => process.exit(1)); // the parent died: no one waits for the answer
process.once('message', (req: ChildRequest) => {
  parse(req)
    .catch((e: unknown): ChildReply =>
      e instanceof BookRejectedError
        ? { type: 'refused', status: e.status, code: e.code, message: e.message }
        : { type: 'refused', status: 422, code: 'book_parse_failed', message: 'the book cannot be read' },
    )
    .then(send)
    .then(() => process.exit(0));
});
