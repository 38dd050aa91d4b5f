import { pathToFileURL } from 'node:url';
import { BookRejectedError } from '../book.errors';
import { PdfReadError, PdfTextItem } from './pdf-extractor';

export interface PdfBounds {
  maxPages: number;
  /** characters of extracted text past which reading stops */
  maxTextChars: number;
  onPage?: (done: number, total: number) => void;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- pdf.js is loaded untyped, at run time */
// a real dynamic import: tsc would turn `import()` into require(), and pdf.js is ESM-only
const importEsm = new Function('url', 'return import(url)') as (url: string) => Promise<any>;

/**
 * pdf.js in this very process, page by page, for the parser child process (parse-child.ts): the
 * process itself is the sandbox, so no worker thread. Stops at maxPages (checked against the
 * page count before any page is read) and once the text passes maxTextChars, reading each
 * page's text as a stream so one huge page is cut off part-way.
 */
export async function extractPdfBounded(pdf: Uint8Array, bounds: PdfBounds): Promise<PdfTextItem[][]> {
  const pdfjs = await importEsm(pathToFileURL(require.resolve('pdfjs-dist/legacy/build/pdf.mjs')).href);
  let doc: any;
  try {
    doc = await pdfjs.getDocument({
      data: new Uint8Array(pdf),
      verbosity: 0,
      isEvalSupported: false,
      useSystemFonts: false,
      disableFontFace: true,
    }).promise;
  } catch (e) {
    const name = (e as Error)?.name;
    throw new PdfReadError(name === 'PasswordException' ? 'password' : 'invalid', String((e as Error)?.message ?? e));
  }
  const total: number = doc.numPages;
  if (total > bounds.maxPages) throw tooManyPages(total, bounds.maxPages);
  const pages: PdfTextItem[][] = [];
  let chars = 0;
  for (let p = 1; p <= total; p++) {
    const page = await doc.getPage(p);
    const items: PdfTextItem[] = [];
    const reader = page.streamTextContent().getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const i of value.items) {
        if (!('str' in i)) continue;
        chars += i.str.length;
        items.push([i.str, !!i.hasEOL, i.transform[4], i.transform[5], i.height]);
      }
      if (chars > bounds.maxTextChars) {
        await reader.cancel();
        throw tooMuchText(bounds.maxTextChars);
      }
    }
    pages.push(items);
    page.cleanup();
    bounds.onPage?.(p, total);
  }
  await doc.destroy();
  return pages;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

export const tooManyPages = (pages: number, max: number) =>
  new BookRejectedError(413, `the PDF has ${pages} pages, more than the ${max} allowed`, 'book_too_many_pages');

export const tooMuchText = (max: number) =>
  new BookRejectedError(
    413,
    `the book expands to more than ${Math.round(max / 1024 / 1024)} MB of text`,
    'book_too_large_when_expanded',
  );
