import { chapterIndexes } from './chapter-numbering';
import { normaliseNewlines } from './gutenberg';
import { HeadingMatch, matchHeading } from './headings';
import {
  countLetters,
  FRONT_MATTER_TITLE,
  MIN_FRONT_MATTER_LETTERS,
  Paragraph,
  ParseOptions,
  ParsedBook,
  ParsedChapter,
  SourceLine,
  toParagraphs,
} from './parsed-book';

interface MdHeading {
  line: number;
  /** lines the heading takes (2 for a setext heading) */
  span: number;
  level: number;
  text: string;
}

/** A longer line is body text, not a heading (and long lines would make the heading regex slow). */
const MAX_HEADING_LINE = 300;
const MAX_HEADING_CHARS = 200;
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT_1 = /^ {0,3}=+[ \t]*$/;
const SETEXT_2 = /^ {0,3}-+[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** Inline Markdown a heading may carry: emphasis, code, links, images. */
function plainHeading(s: string): string {
  return s
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/(\*\*|__|\*|_|`)(.+?)\1/g, '$2')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_HEADING_CHARS);
}

function findHeadings(lines: string[]): MdHeading[] {
  const out: MdHeading[] = [];
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const f = FENCE.exec(line);
    if (f) {
      if (fence === null) fence = f[1][0];
      else if (f[1][0] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const atx = line.length <= MAX_HEADING_LINE ? ATX.exec(line) : null;
    if (atx) {
      const text = plainHeading(atx[2] ?? '');
      if (text) out.push({ line: i, span: 1, level: atx[1].length, text });
      continue;
    }
    const next = lines[i + 1];
    const prevBlank = i === 0 || lines[i - 1].trim() === '';
    if (next !== undefined && line.trim() && prevBlank && !/^ {0,3}([-*+>]|\d+[.)])\s/.test(line)) {
      const level = SETEXT_1.test(next) ? 1 : SETEXT_2.test(next) ? 2 : 0;
      if (level) {
        out.push({ line: i, span: 2, level, text: plainHeading(line) });
        i++;
      }
    }
  }
  return out;
}

/**
 * Markdown: `#` and `##` headings start chapters, deeper ones name the section the following
 * paragraphs belong to. A single `#` heading above `##` chapters is the document's title, not a
 * chapter. Code blocks are kept as paragraphs; headings inside them do not count.
 */
export function parseMarkdown(markdown: string, opts: ParseOptions): ParsedBook {
  const lines = normaliseNewlines(markdown).split('\n');
  const headings = findHeadings(lines);
  const top = headings.filter((h) => h.level <= 2);
  const h1 = top.filter((h) => h.level === 1);
  const titleHeading = h1.length === 1 && top[0] === h1[0] && top.some((h) => h.level === 2) ? h1[0] : null;
  const chapterHeadings = top.filter((h) => h !== titleHeading);
  const headingAt = new Map(headings.map((h) => [h.line, h]));

  const chapters: Omit<ParsedChapter, 'index'>[] = [];
  const numbering: Parameters<typeof chapterIndexes>[0] = [];
  let current: { title: string | null; paragraphs: Paragraph[] } = { title: null, paragraphs: [] };
  let section: string | null = null;
  let pending: SourceLine[] = [];
  const flush = () => {
    current.paragraphs.push(...toParagraphs(pending, section));
    pending = [];
  };
  const close = () => {
    flush();
    if (current.title !== null) {
      chapters.push({ title: current.title, paragraphs: current.paragraphs });
      numbering.push(chapterNumber(current.title));
    } else if (chapterHeadings.length === 0) {
      chapters.push({ title: opts.fallbackTitle, paragraphs: current.paragraphs });
      numbering.push(null);
    } else if (countLetters(current.paragraphs.map((p) => p.text).join(' ')) >= MIN_FRONT_MATTER_LETTERS) {
      chapters.push({ title: FRONT_MATTER_TITLE, paragraphs: current.paragraphs });
      numbering.push('front-matter');
    }
  };

  for (let i = 0; i < lines.length; i++) {
    const h = headingAt.get(i);
    if (!h) {
      if (!FENCE.test(lines[i])) pending.push({ text: lines[i], page: null });
      continue;
    }
    i += h.span - 1;
    if (h === titleHeading) continue;
    if (h.level <= 2) {
      close();
      current = { title: h.text, paragraphs: [] };
      section = null;
    } else {
      flush();
      section = h.text;
      // the heading's words are searchable text of its section too
      current.paragraphs.push({ text: h.text, page: null, section });
    }
  }
  close();
  const indexes = chapterIndexes(numbering);
  return { chapters: chapters.map((c, i) => ({ index: indexes[i], ...c })) };
}

/** A heading's chapter number, if it has one; a part's number is not (in Markdown parts hold chapters). */
function chapterNumber(title: string): HeadingMatch | null {
  const match = matchHeading(title);
  return match?.kind === 'part' ? null : match;
}
