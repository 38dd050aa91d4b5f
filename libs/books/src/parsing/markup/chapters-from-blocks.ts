import { chapterIndexes } from '../chapter-numbering';
import { HeadingMatch, matchHeading } from '../headings';
import { countLetters, FRONT_MATTER_TITLE, MIN_FRONT_MATTER_LETTERS, Paragraph, ParsedChapter } from '../parsed-book';
import { Block } from './html-blocks';
import { OutlineEntry } from './outline';
import { isApparatusTitle, Matter, matterOf } from './semantics';

export interface AssembleOptions {
  /** the chapter title when there is no outline at all (the book's title) */
  fallbackTitle: string;
  /** the block the body starts at (EPUB landmarks or guide): what comes before it is front matter */
  bodyStart?: number | null;
  /** blocks left out (the document's title heading) */
  skip?: ReadonlySet<number>;
}

/** Titles of front matter, for a part not marked as such: before the first chapter it is counted 0. */
const FRONT_MATTER_TITLE_RE =
  /^(preface|foreword|dedication|epigraph|acknowledge?ments|introduction|prologue|(author|translator|editor)['\u2019]?s note|a note on the (text|translation))\b/i;

/** The section name of a chapter's notes. */
export const NOTES_SECTION = 'Notes';

/** A note referred to but not marked as one is at most this long (else the link was not to a note). */
const MAX_NOTE_BLOCKS = 8;
const MAX_NOTE_CHARS = 4000;

interface Draft {
  title: string;
  /** where it starts (its entry's block) */
  start: number;
  matter: Matter | null;
  /** whether its first block was read yet (its role decides the chapter's matter) */
  seen: boolean;
  paragraphs: Paragraph[];
  /** the notes its text refers to, in the order first referred to */
  notes: string[];
  /** the text before the first entry */
  preamble?: boolean;
}

/**
 * Chapters from blocks and the outline's entries: each chapter entry starts a chapter titled as
 * the entry says (its own heading, repeated at its start, is left out), section entries and the
 * headings inside a chapter name the sections of the paragraphs after them, and a part's own text
 * (an epigraph on its title page) goes with its first chapter. Apparatus (cover, title page,
 * copyright, contents, index, colophon: by epub:type or ARIA role, by the EPUB's landmarks or
 * guide, or by a title such as "Index") is dropped. Front matter (marked so, before the EPUB's
 * body landmark, or titled Preface, Foreword, Introduction, Prologue… before the first chapter)
 * is counted 0 and back matter after the last chapter, as chapterIndexes counts. Notes (marked as
 * footnotes or endnotes, or the short targets of marker links) leave the running text and join
 * the end of the chapter that first refers to them, as the section "Notes"; notes no text refers
 * to stay where they are. Text before the first entry is kept as "Front matter" only when it is
 * long enough, as for plain text; without entries the whole text is one chapter.
 */
export function chaptersFromBlocks(blocks: Block[], entries: OutlineEntry[], opts: AssembleOptions): ParsedChapter[] {
  const notes = noteGroups(blocks, entries);
  /** the note each moved block belongs to */
  const noteAt = new Map<number, string>();
  for (const [key, group] of notes) for (const i of group) noteAt.set(i, key);
  const entriesAt = new Map<number, OutlineEntry[]>();
  for (const e of entries) entriesAt.set(e.at, [...(entriesAt.get(e.at) ?? []), e]);

  const drafts: Draft[] = [];
  const draft = (title: string, start: number): Draft => ({
    title,
    start,
    matter: null,
    seen: false,
    paragraphs: [],
    notes: [],
  });
  const preamble: Draft = { ...draft(entries.length ? FRONT_MATTER_TITLE : opts.fallbackTitle, 0), preamble: true };
  let current: Draft = preamble;
  /** a part's text (an epigraph on its title page) waiting for the part's first chapter */
  let part: Draft | null = null;
  /** titles whose headings, at a chapter's start, repeat them */
  let titles: string[] = [];
  /** whether the chapter's own text began (its repeated title headings are behind) */
  let begun = false;
  let section: string | null = null;
  /** the notes placed with the chapter that refers to them, and those left where they stand */
  const withChapter = new Set<string>();
  const inPlace = new Set<string>();
  const close = () => {
    if (current !== part) drafts.push(current);
  };

  for (let i = 0; i < blocks.length; i++) {
    for (const e of entriesAt.get(i) ?? []) {
      if (e.kind === 'section') {
        section = e.title;
        continue;
      }
      close();
      section = null;
      begun = false;
      if (e.kind === 'part') {
        if (part) drafts.push(part); // no chapter followed it: its text, if any, is a chapter of its own
        part = current = draft(e.title, i);
        titles = [e.title];
      } else {
        current = draft(e.title, i);
        titles = part ? [part.title, e.title] : [e.title];
        if (part) current.paragraphs = part.paragraphs;
        if (part) current.notes = part.notes;
        part = null;
      }
    }
    const b = blocks[i];
    if (!b.linear || opts.skip?.has(i)) continue;
    const note = noteAt.get(i);
    if (note !== undefined) {
      if (withChapter.has(note)) continue; // it went with the chapter that refers to it
      // reached before any text referring to it (the reference fell in an empty block): it stays here
      inPlace.add(note);
    }
    const matter = matterOf(b.role);
    if (!current.seen) {
      current.seen = true;
      current.matter = matter;
    }
    if (matter === 'apparatus') continue;
    // the chapter's title set at its start, as a heading or as a styled paragraph (`p.chapter-title`)
    if (!begun && titles.some((t) => repeatsTitle(b, t))) continue;
    if (b.heading !== null) section = b.text.slice(0, 200);
    begun = true;
    current.paragraphs.push({ text: b.text, page: null, section: current === part ? current.title : section });
    for (const ref of b.refs) {
      if (!notes.has(ref) || withChapter.has(ref) || inPlace.has(ref)) continue;
      withChapter.add(ref);
      current.notes.push(ref);
    }
  }
  close();
  if (part) drafts.push(part);

  const kept = drafts
    .map((d) => ({ ...d, paragraphs: [...d.paragraphs, ...notesOf(d, notes, blocks)] }))
    .filter((d) => d.paragraphs.length > 0 && !isApparatus(d))
    .filter((d) => !d.preamble || entries.length === 0 || lettersOf(d) >= MIN_FRONT_MATTER_LETTERS);
  let inBody = false;
  const numbering = kept.map((d): HeadingMatch | null | 'front-matter' => {
    const before = opts.bodyStart !== undefined && opts.bodyStart !== null && d.start < opts.bodyStart;
    const front =
      d.preamble || d.matter === 'front' || before || (d.matter === null && FRONT_MATTER_TITLE_RE.test(d.title));
    if (!inBody && entries.length > 0 && front) return 'front-matter';
    inBody = true;
    // a lone "I" is a pronoun in running text, but a title of the contents is a numeral
    const match = matchHeading(/^I\.?$/.test(d.title) ? 'I.' : d.title);
    return match?.kind === 'part' ? null : match; // a part read as a chapter (no chapters in it) is not numbered
  });
  const indexes = chapterIndexes(numbering);
  return kept.map((d, i) => ({ index: indexes[i], title: d.title, paragraphs: d.paragraphs }));
}

function isApparatus(d: Draft): boolean {
  return d.matter === 'apparatus' || (d.matter === null && !d.preamble && isApparatusTitle(d.title));
}

const lettersOf = (d: Draft) => countLetters(d.paragraphs.map((p) => p.text).join(' '));

/**
 * A block repeating a title: a heading with the same letters and digits as the title, a part of
 * them or more ("Chapter 1" of "Chapter 1: The Map Room", "Chapter 1 The Map Room" of "The Map
 * Room"); a paragraph (a title styled by class, `p.chapter-title`) only when it is the whole
 * title, or its start reading as a heading ("Chapter 2"): never a sentence that begins with it.
 */
function repeatsTitle(b: Block, title: string): boolean {
  const norm = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
  const h = norm(b.text);
  const t = norm(title);
  if (!h || !t) return false;
  if (b.heading !== null) return t.includes(h) || h.includes(t);
  return h === t || (t.startsWith(h) && matchHeading(b.text) !== null);
}

/** The paragraphs of the notes a chapter refers to, backlink arrows dropped. */
function notesOf(d: Draft, notes: Map<string, number[]>, blocks: Block[]): Paragraph[] {
  return d.notes.flatMap((key) =>
    notes.get(key)!.flatMap((i) => {
      const text = blocks[i].text.replace(/\s*[\u21a9\u2191\u2934][\ufe0e\ufe0f]?/gu, '').trim();
      return text ? [{ text, page: null, section: NOTES_SECTION }] : [];
    }),
  );
}

/**
 * The notes the running text refers to, each as its blocks: those marked as notes (epub:type
 * footnote/endnote, role doc-footnote/doc-endnote), and the targets of marker links that read as
 * notes (short, no heading, not where an outline entry starts): an EPUB 2 or Word note is marked
 * only by the link to it.
 */
function noteGroups(blocks: Block[], entries: OutlineEntry[]): Map<string, number[]> {
  const refs = new Set<string>();
  for (const b of blocks) if (b.note === null) for (const r of b.refs) refs.add(r);
  const marked = new Map<string, number[]>();
  const holding = new Map<string, number[]>();
  const anchored = new Map<string, number>();
  const add = (map: Map<string, number[]>, k: string, i: number) => {
    const list = map.get(k);
    if (list) list.push(i);
    else map.set(k, [i]);
  };
  blocks.forEach((b, i) => {
    if (b.note !== null && refs.has(b.note)) add(marked, b.note, i);
    for (const k of b.within) if (refs.has(k)) add(holding, k, i);
    for (const k of b.ids) if (refs.has(k) && !anchored.has(k)) anchored.set(k, i);
  });
  const starts = new Set(entries.map((e) => e.at));
  const groups = new Map<string, number[]>();
  const taken = new Set<number>();
  for (const ref of refs) {
    let group = marked.get(ref);
    if (!group) {
      const candidate = holding.get(ref) ?? (anchored.has(ref) ? [anchored.get(ref)!] : []);
      const plausible =
        candidate.length > 0 &&
        candidate.length <= MAX_NOTE_BLOCKS &&
        candidate.reduce((n, i) => n + blocks[i].text.length, 0) <= MAX_NOTE_CHARS &&
        candidate.every((i) => blocks[i].heading === null && !starts.has(i));
      if (plausible) group = candidate;
    }
    const own = group?.filter((i) => !taken.has(i)) ?? [];
    if (own.length === 0) continue;
    for (const i of own) taken.add(i);
    groups.set(ref, own);
  }
  return groups;
}
