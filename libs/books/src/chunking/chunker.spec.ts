import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '@parley/platform';
import { parseText } from '../parsing/text-parser';
import { ParsedChapter } from '../parsing/parsed-book';
import { chunkBook, ChunkDraft, DEFAULT_CHUNK_OPTIONS, splitLong, splitSentences } from './chunker';

const { minChars, maxChars } = DEFAULT_CHUNK_OPTIONS;
const sampleBook = (file: string) =>
  parseText(readFileSync(path.join(projectRoot(), 'data/books', file), 'utf8'), { fallbackTitle: file });
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** A chunk's chapter: the index alone is not unique (front matter and prefatory letters are all 0). */
const chapterOf = (c: Pick<ChunkDraft, 'chapterIndex' | 'chapter'>) => `${c.chapterIndex} ${c.chapter}`;

/** Whether a chunk is the last one of its chapter and section (the only ones allowed to be short). */
const lastOfRun = (chunks: ChunkDraft[], i: number) =>
  i === chunks.length - 1 ||
  chapterOf(chunks[i + 1]) !== chapterOf(chunks[i]) ||
  chunks[i + 1].section !== chunks[i].section;

const chapter = (
  index: number,
  paragraphs: string[],
  section: string | null = null,
  page: number | null = null,
): ParsedChapter => ({
  index,
  title: `Chapter ${index}`,
  paragraphs: paragraphs.map((text) => ({ text, section, page })),
});

describe(chunkBook.name, () => {
  describe.each(['alice.txt', 'pride_and_prejudice.txt', 'frankenstein.txt'])('%s', (file) => {
    const book = sampleBook(file);
    const chunks = chunkBook(book.chapters);

    it('makes chunks of at most 1200 characters, and at least 800 unless a chapter ends', () => {
      expect(chunks.length).toBeGreaterThan(100);
      for (const [i, c] of chunks.entries()) {
        expect(c.text.length).toBeLessThanOrEqual(maxChars);
        if (!lastOfRun(chunks, i)) expect(c.text.length).toBeGreaterThanOrEqual(minChars - 2);
        expect(c.text.trim()).toBe(c.text);
        expect(c.text.length).toBeGreaterThan(0);
      }
    });

    it('numbers chunks in reading order and gives each the chapter it comes from', () => {
      expect(chunks.map((c) => c.ordinal)).toEqual(chunks.map((_, i) => i));
      const chapters = new Map(book.chapters.map((c) => [chapterOf({ chapterIndex: c.index, chapter: c.title }), c]));
      for (const [i, c] of chunks.entries()) {
        expect(chapters.has(chapterOf(c))).toBe(true);
        if (i > 0) expect(c.chapterIndex).toBeGreaterThanOrEqual(chunks[i - 1].chapterIndex);
        expect(c.page).toBeNull();
        expect(c.section).toBeNull();
        // a chunk holds only its own chapter's text
        const chapterText = squash(
          chapters
            .get(chapterOf(c))!
            .paragraphs.map((p) => p.text)
            .join(' '),
        );
        expect(chapterText).toContain(squash(c.text).slice(0, 200));
      }
    });

    it('repeats the end of a chunk at the start of the next one in the same chapter', () => {
      let overlapping = 0;
      let pairs = 0;
      for (let i = 1; i < chunks.length; i++) {
        if (chapterOf(chunks[i]) !== chapterOf(chunks[i - 1])) continue;
        pairs++;
        const head = chunks[i].text.slice(0, 60);
        if (chunks[i - 1].text.includes(head)) overlapping++;
      }
      expect(overlapping / pairs).toBeGreaterThan(0.9);
    });

    it('loses no text: every paragraph is in the chunks of its chapter', () => {
      const byChapter = new Map<string, string>();
      for (const c of chunks) byChapter.set(chapterOf(c), `${byChapter.get(chapterOf(c)) ?? ''} ${squash(c.text)}`);
      for (const ch of book.chapters) {
        for (const p of ch.paragraphs) {
          for (const piece of splitSentences(p.text).flatMap((s) => splitLong(s, maxChars - minChars))) {
            expect(byChapter.get(chapterOf({ chapterIndex: ch.index, chapter: ch.title }))).toContain(squash(piece));
          }
        }
      }
    });
  });

  it('keeps short chapters whole, and a chapter boundary always starts a new chunk', () => {
    const chunks = chunkBook([chapter(1, ['One.', 'Two.']), chapter(2, ['Three.']), chapter(3, [])]);
    expect(chunks.map((c) => [c.chapterIndex, c.text])).toEqual([
      [1, 'One.\n\nTwo.'],
      [2, 'Three.'],
    ]);
  });

  it('breaks between paragraphs when it can, and carries the last paragraph over', () => {
    const para = (n: number) => `Paragraph ${n} ${'word '.repeat(58).trim()}.`; // ~310 characters
    const chunks = chunkBook([
      chapter(
        1,
        Array.from({ length: 8 }, (_, i) => para(i + 1)),
      ),
    ]);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(c.text.split('\n\n').every((p) => /^Paragraph \d+ .*\.$/.test(p))).toBe(true);
    expect(chunks[1].text.startsWith(chunks[0].text.split('\n\n').pop()!)).toBe(true);
  });

  it('splits an over-long paragraph at sentences and clauses, never inside a word', () => {
    const sentence = (n: number) => `Sentence ${n} runs on, and on; ${'and further still '.repeat(20).trim()}.`;
    const text = Array.from({ length: 10 }, (_, i) => sentence(i)).join(' ');
    const chunks = chunkBook([chapter(1, [text])]);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(c.text.length).toBeLessThanOrEqual(maxChars);
      expect(text).toContain(c.text);
      expect(c.text).toMatch(/^\S.*\S$/s);
      expect(text.charAt(text.indexOf(c.text) + c.text.length)).toMatch(/^(\s|)$/);
    }
  });

  it('never lets a chunk span sections, and keeps the section and the page of its start', () => {
    const ch: ParsedChapter = {
      index: 1,
      title: 'Guide',
      paragraphs: [
        { text: 'Intro text.', section: null, page: 1 },
        { text: 'Setup steps.', section: 'Setup', page: 2 },
        { text: 'More setup.', section: 'Setup', page: 3 },
        { text: 'Usage text.', section: 'Usage', page: 3 },
      ],
    };
    expect(chunkBook([ch]).map((c) => [c.section, c.page, c.text])).toEqual([
      [null, 1, 'Intro text.'],
      ['Setup', 2, 'Setup steps.\n\nMore setup.'],
      ['Usage', 3, 'Usage text.'],
    ]);
  });
});

describe(splitSentences.name, () => {
  it('splits after . ! ? and closing quotes, not after Mr. or an initial', () => {
    expect(splitSentences("'Oh dear!' she said. Mr. Darcy bowed. J. R. came? Yes.")).toEqual([
      "'Oh dear!' she said.",
      'Mr. Darcy bowed.',
      'J. R. came?',
      'Yes.',
    ]);
  });
});

describe('pathological input', () => {
  it('splits a paragraph that is one long run of quote marks into one sentence', () => {
    const { splitSentences } = jest.requireActual('./chunker') as typeof import('./chunker');
    expect(splitSentences(`${"'".repeat(50_000)} end.`)).toHaveLength(1);
    expect(splitSentences('He said "Stop." Then "Go!" She left.')).toEqual([
      'He said "Stop."',
      'Then "Go!"',
      'She left.',
    ]);
  });
});
