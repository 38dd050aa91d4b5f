import { ParsedChapter } from '../parsing/parsed-book';

/** A passage as stored and searched. */
export interface ChunkDraft {
  /** 0..n-1 over the whole book, in reading order */
  ordinal: number;
  chapterIndex: number;
  chapter: string;
  section: string | null;
  page: number | null;
  text: string;
}

export interface ChunkOptions {
  /** a chunk may end at a paragraph break once it holds this many characters */
  minChars: number;
  /** hard upper bound of a chunk, overlap included */
  maxChars: number;
  /** the overlap carried into the next chunk: its last paragraph or sentences up to this size */
  overlapChars: number;
}

export const DEFAULT_CHUNK_OPTIONS: ChunkOptions = { minChars: 800, maxChars: 1200, overlapChars: 300 };

/** A sentence (or a piece of an over-long one): the unit chunks are packed from. */
interface Unit {
  text: string;
  paragraph: number;
  startsParagraph: boolean;
  page: number | null;
}

const ABBREVIATION =
  /(?:^|[\s(])(?:Mr|Mrs|Ms|Dr|St|Mt|Jr|Sr|Prof|Rev|Capt|Col|Gen|Lt|No|vs|etc|viz|i\.e|e\.g|[A-Z])\.$/;

/** Sentences: split after . ! ? (and closing quotes), not after common abbreviations or initials. */
export function splitSentences(paragraph: string): string[] {
  const pieces = paragraph.split(/(?<=[.!?]['"\u2019\u201d)\]_]{0,3})\s+(?=[\p{Lu}\p{N}'"\u2018\u201c([_])/u);
  const out: string[] = [];
  for (const piece of pieces) {
    if (out.length && ABBREVIATION.test(out[out.length - 1])) out[out.length - 1] += ' ' + piece;
    else out.push(piece);
  }
  return out;
}

/** Cuts text longer than `max` at clause boundaries (; : , —) where it can, else between words. */
export function splitLong(text: string, max: number): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const window = rest.slice(0, max + 1);
    let cut = -1;
    for (const re of [/[;:]\s/g, /[,\u2014]\s|--\s?/g, /\s/g]) {
      let m: RegExpExecArray | null;
      let last = -1;
      while ((m = re.exec(window)) !== null)
        if (m.index + m[0].length <= max && m.index > max / 3) last = m.index + m[0].length;
      if (last > 0) {
        cut = last;
        break;
      }
    }
    if (cut <= 0) cut = max; // one word longer than max
    out.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest) out.push(rest);
  return out;
}

function joinUnits(units: Unit[]): string {
  return units.map((u, i) => (i === 0 ? '' : u.paragraph !== units[i - 1].paragraph ? '\n\n' : ' ') + u.text).join('');
}

function lengthOf(units: Unit[]): number {
  return joinUnits(units).length;
}

/**
 * Paragraph-aware chunks of about minChars..maxChars. A chunk ends at a paragraph break once it
 * is long enough and the next paragraph would not fit, else at a sentence; the next chunk begins
 * with the previous one's last paragraph (or sentences) up to overlapChars, so a passage cut in
 * two is whole in one of them. Chunks never span chapters or sections.
 */
export function chunkBook(chapters: ParsedChapter[], options: Partial<ChunkOptions> = {}): ChunkDraft[] {
  const opts = { ...DEFAULT_CHUNK_OPTIONS, ...options };
  const maxUnit = Math.max(80, opts.maxChars - opts.minChars);
  const chunks: ChunkDraft[] = [];
  for (const chapter of chapters) {
    // runs of paragraphs under the same section
    const runs: { section: string | null; units: Unit[] }[] = [];
    chapter.paragraphs.forEach((p, pi) => {
      if (!runs.length || runs[runs.length - 1].section !== p.section) runs.push({ section: p.section, units: [] });
      const units = runs[runs.length - 1].units;
      splitSentences(p.text)
        .flatMap((s) => splitLong(s, maxUnit))
        .forEach((text, si) => units.push({ text, paragraph: pi, startsParagraph: si === 0, page: p.page }));
    });
    for (const run of runs) {
      for (const units of pack(run.units, opts)) {
        chunks.push({
          ordinal: chunks.length,
          chapterIndex: chapter.index,
          chapter: chapter.title,
          section: run.section,
          page: units[0].page,
          text: joinUnits(units),
        });
      }
    }
  }
  return chunks;
}

function pack(units: Unit[], opts: ChunkOptions): Unit[][] {
  const out: Unit[][] = [];
  let cur: Unit[] = [];
  let fresh = 0; // units in cur that are not overlap from the previous chunk
  /** whether cur plus the whole paragraph starting at unit i would exceed the limit */
  const paragraphOverflows = (i: number) => {
    let len = lengthOf(cur) + 2;
    for (let j = i; j < units.length && units[j].paragraph === units[i].paragraph; j++) {
      len += units[j].text.length + 1;
      if (len > opts.maxChars) return true;
    }
    return false;
  };
  for (let i = 0; i < units.length; i++) {
    const u = units[i];
    if (fresh > 0) {
      const full = lengthOf([...cur, u]) > opts.maxChars;
      const breakHere = u.startsParagraph && lengthOf(cur) >= opts.minChars && paragraphOverflows(i);
      if (full || breakHere) {
        out.push(cur);
        cur = overlapOf(cur, opts.overlapChars);
        fresh = 0;
      }
    }
    // the overlap gives way when it would push this unit over the limit
    while (cur.length && lengthOf([...cur, u]) > opts.maxChars) cur = cur.slice(1);
    cur.push(u);
    fresh++;
  }
  if (fresh > 0) {
    const tail = cur.slice(cur.length - fresh);
    const prev = out[out.length - 1];
    // a short tail joins the chunk before it when that still fits
    if (prev && lengthOf(tail) < opts.minChars / 4 && lengthOf([...prev, ...tail]) <= opts.maxChars) prev.push(...tail);
    else out.push(cur);
  }
  return out;
}

/**
 * What the next chunk repeats: the chunk's last sentence, plus the sentences before it in the same
 * paragraph while they fit in the budget (the whole last paragraph when it is short). Never the
 * whole chunk.
 */
function overlapOf(chunk: Unit[], budget: number): Unit[] {
  const tail: Unit[] = [];
  for (let i = chunk.length - 1; i > 0; i--) {
    if (tail.length && lengthOf([chunk[i], ...tail]) > budget) break;
    tail.unshift(chunk[i]);
    if (chunk[i].startsParagraph) break;
  }
  return tail;
}
