import { normaliseNewlines, stripGutenberg } from './gutenberg';
import { chapterIndexes } from './chapter-numbering';
import { HeadingMatch, matchHeading } from './headings';
import {
  countLetters,
  FRONT_MATTER_TITLE,
  MIN_FRONT_MATTER_LETTERS,
  ParseOptions,
  ParsedBook,
  ParsedChapter,
  SourceLine,
  toParagraphs,
} from './parsed-book';

/** A heading found in the lines: where it starts, the last line it uses, and its title. */
interface Heading {
  start: number;
  end: number;
  match: HeadingMatch;
  title: string;
}

/** A table-of-contents entry has (almost) no text before the next heading. */
const MAX_TOC_ENTRY_LETTERS = 200;

const blank = (l: SourceLine | undefined) => l === undefined || l.text.trim() === '';

/** Plain text (Project Gutenberg or not) into chapters of paragraphs. */
export function parseText(text: string, opts: ParseOptions): ParsedBook {
  const lines = stripGutenberg(normaliseNewlines(text).split('\n'));
  return parseLines(
    lines.map((t) => ({ text: t, page: null })),
    opts,
  );
}

/**
 * Splits lines at chapter headings. Text before the first heading is kept as "Front matter" only
 * when it is long enough to be more than a title page; a text without headings is one chapter.
 */
export function parseLines(lines: SourceLine[], opts: ParseOptions, dehyphenate = false): ParsedBook {
  const candidates = findCandidates(lines);
  const { headings, dropLines } = chooseHeadings(lines, candidates);
  const keep = (from: number, to: number) => lines.slice(from, to).filter((_, i) => !dropLines.has(from + i));

  const chapters: Omit<ParsedChapter, 'index'>[] = [];
  const numbering: Parameters<typeof chapterIndexes>[0] = [];
  const firstStart = headings.length ? headings[0].start : lines.length;
  const preamble = keep(0, firstStart);
  const preambleParagraphs = toParagraphs(preamble, null, dehyphenate);
  if (headings.length === 0) {
    chapters.push({ title: opts.fallbackTitle, paragraphs: preambleParagraphs });
    numbering.push(null);
  } else if (countLetters(preambleParagraphs.map((p) => p.text).join(' ')) >= MIN_FRONT_MATTER_LETTERS) {
    chapters.push({ title: FRONT_MATTER_TITLE, paragraphs: preambleParagraphs });
    numbering.push('front-matter');
  }
  headings.forEach((h, j) => {
    const next = j + 1 < headings.length ? headings[j + 1].start : lines.length;
    chapters.push({ title: h.title, paragraphs: toParagraphs(keep(h.end + 1, next), null, dehyphenate) });
    numbering.push(h.match);
  });
  const indexes = chapterIndexes(numbering);
  return { chapters: chapters.map((c, i) => ({ index: indexes[i], ...c })) };
}

/** Lines that read as headings where they stand: after a blank line, and standing alone. */
function findCandidates(lines: SourceLine[]): Heading[] {
  const found: Heading[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!blank(lines[i - 1]) || blank(lines[i])) continue;
    const match = matchHeading(lines[i].text.trim());
    if (!match) continue;
    if (blank(lines[i + 1])) {
      found.push({ start: i, end: i, match, title: match.label });
      continue;
    }
    if (match.inlineTitle || match.kind === 'named') continue; // a sentence that happens to start so
    // `CHAPTER I.` with its title on the next line
    const next = lines[i + 1].text.trim().replace(/\s+/g, ' ');
    if (next.length <= 80 && !/^\p{Ll}/u.test(next) && !/[,;:]$/.test(next) && blank(lines[i + 2])) {
      const sep = /[.:\-\u2013\u2014]$/.test(match.label) ? ' ' : '. ';
      found.push({ start: i, end: i + 1, match, title: `${match.label}${sep}${next}` });
    } else if (match.kind === 'chapter') {
      found.push({ start: i, end: i, match, title: match.label }); // `Chapter 5` directly above its text
    }
  }
  return found;
}

/**
 * Picks the level that splits the book: chapters/letters if any, else parts/books/volumes, else
 * bare roman numerals counting 1, 2, 3…; drops table-of-contents entries (listed again later).
 * Part lines above chapters are dropped from the text.
 */
function chooseHeadings(lines: SourceLine[], candidates: Heading[]): { headings: Heading[]; dropLines: Set<number> } {
  const of = (...kinds: HeadingMatch['kind'][]) => candidates.filter((c) => kinds.includes(c.match.kind));
  const dropLines = new Set<number>();
  const drop = (hs: Heading[]) =>
    hs.forEach((h) => {
      for (let i = h.start; i <= h.end; i++) dropLines.add(i);
    });

  let headings: Heading[];
  if (of('chapter').length > 0) {
    headings = withoutContents(lines, of('chapter', 'named'), drop);
    drop(of('part'));
  } else if (of('part').length >= 2) {
    headings = withoutContents(lines, of('part', 'named'), drop);
  } else {
    // numerals counting 1, 2, 3…; else only those with a title on their line, when they count so
    // (stories `I. A SCANDAL IN BOHEMIA` … with bare `I.` `II.` part numerals inside a story)
    const titled = of('numeral').filter((h) => h.match.inlineTitle !== '');
    if (countsFromOne(withoutContents(lines, of('numeral'), () => undefined))) {
      headings = withoutContents(lines, of('numeral', 'named'), drop);
    } else if (countsFromOne(withoutContents(lines, titled, () => undefined))) {
      headings = withoutContents(
        lines,
        [...titled, ...of('named')].sort((x, y) => x.start - y.start),
        drop,
      );
    } else {
      headings = withoutContents(lines, of('named'), drop);
    }
  }
  return { headings, dropLines };
}

function countsFromOne(numerals: Heading[]): boolean {
  return numerals.length >= 2 && numerals.every((h, i) => h.match.number === i + 1);
}

/** Removes headings that have no text under them and come again later (a contents list). */
function withoutContents(lines: SourceLine[], headings: Heading[], drop: (hs: Heading[]) => void): Heading[] {
  const dropped: Heading[] = [];
  // where each heading key last occurs, so "listed again later" is one lookup (not a scan per heading)
  const lastIndex = new Map<string, number>();
  headings.forEach((h, j) => lastIndex.set(h.match.key, j));
  const kept = headings.filter((h, j) => {
    const until = j + 1 < headings.length ? headings[j + 1].start : lines.length;
    const letters = countLetters(
      lines
        .slice(h.end + 1, until)
        .map((l) => l.text)
        .join(' '),
    );
    const listedAgain = lastIndex.get(h.match.key)! > j;
    if (letters < MAX_TOC_ENTRY_LETTERS && listedAgain) {
      dropped.push(h);
      return false;
    }
    return true;
  });
  drop(dropped);
  return kept;
}
