/** A line of the source with the page it sits on (null for formats without pages). */
export interface SourceLine {
  text: string;
  page: number | null;
}

/** A paragraph of running text: lines joined, whitespace collapsed. */
export interface Paragraph {
  text: string;
  page: number | null;
  /** the sub-chapter heading it falls under (Markdown ###…, none for plain text) */
  section: string | null;
}

export interface ParsedChapter {
  /** the book's own chapter number: 0 before chapter 1 (front matter, a preface), see chapterIndexes */
  index: number;
  title: string;
  paragraphs: Paragraph[];
}

/** What a book says of itself (an EPUB's package metadata, a Word document's properties, an HTML head). */
export interface BookMetadata {
  title: string | null;
  author: string | null;
}

export interface ParsedBook {
  chapters: ParsedChapter[];
  metadata?: BookMetadata;
}

/** Options every parser takes. */
export interface ParseOptions {
  /** the chapter title used when the text has no headings at all (the book's title) */
  fallbackTitle: string;
  /**
   * the bytes an archive (EPUB, DOCX) may inflate to, all its entries together: the parser
   * process passes the upload's expansion bound (parse-limits.ts); absent, DEFAULT_MAX_EXPANDED_BYTES
   */
  maxExpandedBytes?: number;
}

/** A title or author as a book states it, fit to store: control characters dropped, whitespace collapsed, 200 characters at most. */
export function metadataText(s: string | null | undefined): string | null {
  const text = (s ?? '')
    // eslint-disable-next-line no-control-regex -- the book's own metadata may carry them; a stored title must not
    .replace(/[\u0000-\u001f\u007f]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return text ? text.slice(0, 200) : null;
}

/** The archive bound for callers without limits (tests): BOOK_MAX_EXPANDED_MB's default. */
export const DEFAULT_MAX_EXPANDED_BYTES = 200 * 1024 * 1024;

/** Text before the first heading is kept as a chapter only when it holds at least this many letters. */
export const MIN_FRONT_MATTER_LETTERS = 500;
export const FRONT_MATTER_TITLE = 'Front matter';

export function countLetters(s: string): number {
  const m = s.match(/\p{L}/gu);
  return m ? m.length : 0;
}

/** Splits lines into paragraphs at blank lines; joins a paragraph's lines with single spaces. */
export function toParagraphs(lines: SourceLine[], section: string | null = null, dehyphenate = false): Paragraph[] {
  const out: Paragraph[] = [];
  let buf: string[] = [];
  let page: number | null = null;
  const flush = () => {
    const text = joinLines(buf, dehyphenate);
    if (text) out.push({ text, page, section });
    buf = [];
  };
  for (const line of lines) {
    if (line.text.trim() === '') {
      flush();
      continue;
    }
    if (buf.length === 0) page = line.page;
    buf.push(line.text);
  }
  flush();
  return out;
}

/**
 * Joins wrapped lines with single spaces. With `dehyphenate` (typeset text such as PDF), a word
 * hyphenated across a line break ("exam-" + "ple") is rejoined; plain text keeps "rabbit-" + "hole".
 */
export function joinLines(lines: string[], dehyphenate = false): string {
  let text = '';
  for (const raw of lines) {
    const line = raw.trim();
    if (!line) continue;
    if (!text) text = line;
    else if (dehyphenate && /\p{Ll}-$/u.test(text) && /^\p{Ll}/u.test(line) && !/--$/.test(text))
      text = text.slice(0, -1) + line;
    else text += ' ' + line;
  }
  return text.replace(/[ \t\u00a0]{2,}/g, ' ');
}
