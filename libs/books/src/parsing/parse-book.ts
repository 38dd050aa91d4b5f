import { BookRejectedError } from '../book.errors';
import { BookFormat, MAX_BOOK_BYTES } from '../book.types';
import { parseMarkdown } from './markdown-parser';
import { ParsedBook, ParseOptions } from './parsed-book';
import { extractPdfItems, PdfReadError, PdfTextItem, pdfItemsToLines } from './pdf-extractor';
import { parseLines, parseText } from './text-parser';
import { stripGutenberg } from './gutenberg';

/** Reads a PDF's text runs page by page; the bounded parser process brings its own (see parse-child). */
export type PdfExtractor = (pdf: Uint8Array) => Promise<PdfTextItem[][]>;

/**
 * Checks an upload and parses it into chapters. Refusals are BookRejectedError: empty (400),
 * over 20 MB (413), binary or not the declared format (415), no readable text (400); for EPUB
 * and DOCX also hostile or locked archives (422: book_zip_bomb, book_zip_unsafe_path,
 * book_xml_entities, book_encrypted). The parsers of HTML, EPUB and DOCX are loaded when first
 * needed, so a parser process that reads a PDF or text does not load them.
 */
export async function parseBook(
  format: BookFormat,
  content: string | Buffer,
  opts: ParseOptions,
  extractPdf: PdfExtractor = extractPdfItems,
): Promise<ParsedBook> {
  const size = typeof content === 'string' ? Buffer.byteLength(content, 'utf8') : content.length;
  if (size === 0) throw new BookRejectedError(400, 'the book is empty');
  if (size > MAX_BOOK_BYTES)
    throw new BookRejectedError(413, `the book is larger than ${MAX_BOOK_BYTES / 1024 / 1024} MB`);

  const bytes = () => (typeof content === 'string' ? Buffer.from(content, 'latin1') : content);
  let book: ParsedBook;
  if (format === 'pdf') {
    book = await parsePdf(bytes(), opts, extractPdf);
  } else if (format === 'epub') {
    book = await (await import('./epub/epub-parser')).parseEpub(bytes(), opts);
  } else if (format === 'docx') {
    book = await (await import('./docx-parser')).parseDocx(bytes(), opts);
  } else {
    const text = decodeText(content);
    if (format === 'html') book = (await import('./markup/html-parser')).parseHtml(text, opts);
    else book = format === 'markdown' ? parseMarkdown(text, opts) : parseText(text, opts);
  }
  if (!book.chapters.some((c) => c.paragraphs.some((p) => /[\p{L}\p{N}]/u.test(p.text)))) {
    throw new BookRejectedError(
      400,
      format === 'pdf' ? 'the PDF has no extractable text (a scan?)' : 'the book has no text',
      'book_no_text',
    );
  }
  return book;
}

/** UTF-8 only: NUL bytes, invalid sequences or a mass of control characters mean a binary file. */
export function decodeText(content: string | Buffer): string {
  let text: string;
  if (typeof content === 'string') {
    text = content;
  } else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(content);
    } catch {
      throw new BookRejectedError(415, 'the file is not UTF-8 text');
    }
  }
  if (text.includes('\u0000')) throw new BookRejectedError(415, 'the file is binary, not text');
  const controls = countControlCharacters(text);
  if (controls > 16 && controls > text.length / 100) throw new BookRejectedError(415, 'the file is binary, not text');
  return text;
}

/** Control characters other than tab, newlines and form feed: rare in text, common in binaries. */
function countControlCharacters(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 32 && c !== 9 && c !== 10 && c !== 12 && c !== 13) || c === 127) n++;
  }
  return n;
}

/** Whether the bytes start like a zip archive (an EPUB, a DOCX): a local file header. */
export function looksLikeZip(bytes: Buffer): boolean {
  return bytes.length >= 4 && bytes.readUInt32LE(0) === 0x04034b50;
}

/** Whether the bytes are an OLE compound file (a password-protected .docx is one, or a .doc). */
export function looksLikeOle(bytes: Buffer): boolean {
  return bytes.length >= 8 && bytes.readUInt32LE(0) === 0xe011cfd0 && bytes.readUInt32LE(4) === 0xe11ab1a1;
}

/** Whether the bytes start like a PDF (the header may follow up to 1 KB of junk, as readers allow). */
export function looksLikePdf(bytes: Buffer): boolean {
  return bytes.subarray(0, 1024).indexOf('%PDF-') >= 0;
}

async function parsePdf(bytes: Buffer, opts: ParseOptions, extractPdf: PdfExtractor): Promise<ParsedBook> {
  if (!looksLikePdf(bytes)) throw new BookRejectedError(415, 'the file is not a PDF');
  let pages;
  try {
    pages = await extractPdf(bytes);
  } catch (e) {
    if (!(e instanceof PdfReadError)) throw e;
    const why =
      e.reason === 'password'
        ? 'the PDF is password-protected'
        : e.reason === 'timeout'
          ? e.message
          : 'the PDF cannot be read';
    throw new BookRejectedError(
      e.reason === 'timeout' ? 400 : 415,
      why,
      e.reason === 'timeout' ? 'book_parse_timeout' : 'book_parse_failed',
    );
  }
  const lines = stripGutenberg(pdfItemsToLines(pages), (l) => l.text);
  return parseLines(lines, opts, true);
}
