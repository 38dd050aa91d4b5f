import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '@parley/platform';
import { parseText } from './text-parser';
import { ParsedBook } from './parsed-book';

const sampleBook = (file: string) => readFileSync(path.join(projectRoot(), 'data/books', file), 'utf8');
const titles = (b: ParsedBook) => b.chapters.map((c) => c.title);
const allText = (b: ParsedBook) => b.chapters.flatMap((c) => c.paragraphs.map((p) => p.text)).join('\n');
const parse = (text: string) => parseText(text, { fallbackTitle: 'The Book' });

/** Filler prose long enough to count as a chapter's text. */
const prose = (seed: string, sentences = 6) =>
  Array.from(
    { length: sentences },
    (_, i) => `${seed} walked on through the long grey afternoon, thinking of sentence ${i}.`,
  ).join(' ');

describe(parseText.name, () => {
  describe('the sample Project Gutenberg books', () => {
    it.each([
      ['alice.txt', 12, 'CHAPTER I. Down the Rabbit-Hole', "CHAPTER XII. Alice's Evidence"],
      ['pride_and_prejudice.txt', 61, 'Chapter 1', 'Chapter 61'],
      ['frankenstein.txt', 28, 'Letter 1', 'Chapter 24'],
      // twelve stories headed by titled numerals; story I's bare part numerals (I. II. III.) stay in its text
      ['sherlock_holmes.txt', 12, 'I. A SCANDAL IN BOHEMIA', 'XII. THE ADVENTURE OF THE COPPER BEECHES'],
    ])('%s has %i chapters from "%s" to "%s"', (file, count, first, last) => {
      const book = parse(sampleBook(file));
      expect(book.chapters).toHaveLength(count);
      expect(book.chapters[0].title).toBe(first);
      expect(book.chapters[count - 1].title).toBe(last);
      expect(book.chapters.every((c) => c.paragraphs.length > 0)).toBe(true);
    });

    it('numbers chapters as the books do: Chapter 6 is 6, what comes before chapter 1 is 0', () => {
      const indexes = (file: string) => parse(sampleBook(file)).chapters.map((c) => [c.index, c.title]);
      expect(indexes('alice.txt')[5]).toEqual([6, 'CHAPTER VI. Pig and Pepper']);
      expect(indexes('pride_and_prejudice.txt').every(([i, t]) => t === `Chapter ${i}`)).toBe(true);
      // Frankenstein opens with four letters before its Chapter 1
      expect(indexes('frankenstein.txt').slice(0, 6)).toEqual([
        [0, 'Letter 1'],
        [0, 'Letter 2'],
        [0, 'Letter 3'],
        [0, 'Letter 4'],
        [1, 'Chapter 1'],
        [2, 'Chapter 2'],
      ]);
      expect(indexes('frankenstein.txt')[27]).toEqual([24, 'Chapter 24']);
    });

    it("lists Alice's chapters with their titles, in order", () => {
      expect(titles(parse(sampleBook('alice.txt')))).toEqual([
        'CHAPTER I. Down the Rabbit-Hole',
        'CHAPTER II. The Pool of Tears',
        'CHAPTER III. A Caucus-Race and a Long Tale',
        'CHAPTER IV. The Rabbit Sends in a Little Bill',
        'CHAPTER V. Advice from a Caterpillar',
        'CHAPTER VI. Pig and Pepper',
        'CHAPTER VII. A Mad Tea-Party',
        "CHAPTER VIII. The Queen's Croquet-Ground",
        "CHAPTER IX. The Mock Turtle's Story",
        'CHAPTER X. The Lobster Quadrille',
        'CHAPTER XI. Who Stole the Tarts?',
        "CHAPTER XII. Alice's Evidence",
      ]);
    });

    it.each(['alice.txt', 'pride_and_prejudice.txt', 'frankenstein.txt'])(
      'drops the Gutenberg header, licence and credits of %s',
      (file) => {
        const text = allText(parse(sampleBook(file)));
        expect(text).not.toMatch(/Project Gutenberg/i);
        expect(text).not.toMatch(/\*\*\* ?(START|END) OF/);
        expect(text).not.toMatch(/Produced by/);
        expect(text).not.toMatch(/\r|\uFEFF/);
      },
    );

    it('keeps the story from its first sentence to its last', () => {
      const alice = parse(sampleBook('alice.txt'));
      expect(alice.chapters[0].paragraphs[0].text).toMatch(
        /^Alice was beginning to get very tired of sitting by her sister/,
      );
      const lastChapter = alice.chapters[11].paragraphs;
      expect(lastChapter[lastChapter.length - 1].text).toBe('THE END');

      const pp = parse(sampleBook('pride_and_prejudice.txt'));
      expect(pp.chapters[0].paragraphs[0].text).toBe(
        'It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.',
      );
    });

    it("skips Frankenstein's table of contents, where every heading is listed before the body", () => {
      const book = parse(sampleBook('frankenstein.txt'));
      expect(titles(book).slice(0, 5)).toEqual(['Letter 1', 'Letter 2', 'Letter 3', 'Letter 4', 'Chapter 1']);
      expect(new Set(titles(book)).size).toBe(28);
      expect(book.chapters[0].paragraphs[0].text).toBe('_To Mrs. Saville, England._');
      expect(allText(book)).not.toMatch(/CONTENTS/);
    });

    it('joins wrapped lines into paragraphs with single spaces', () => {
      const first = parse(sampleBook('frankenstein.txt')).chapters[0].paragraphs[2].text;
      expect(first).toMatch(
        /^You will rejoice to hear that no disaster has accompanied the commencement of an enterprise/,
      );
      expect(first).not.toMatch(/\n| {2}/);
    });
  });

  describe('headings', () => {
    it('reads a title on the line under a bare heading', () => {
      const book = parse(
        `CHAPTER I.\nLoomings\n\n${prose('Ishmael')}\n\nCHAPTER II\nThe Carpet-Bag\n\n${prose('He')}\n`,
      );
      expect(titles(book)).toEqual(['CHAPTER I. Loomings', 'CHAPTER II. The Carpet-Bag']);
      expect(book.chapters[0].paragraphs.map((p) => p.text)).toEqual([prose('Ishmael')]);
    });

    it('knows numbers written as words and ordinals', () => {
      const book = parse(
        `Chapter One\n\n${prose('A')}\n\nCHAPTER TWENTY-TWO: The End\n\n${prose('B')}\n\nChapter the Third\n\n${prose('C')}`,
      );
      expect(titles(book)).toEqual(['Chapter One', 'CHAPTER TWENTY-TWO: The End', 'Chapter the Third']);
    });

    it('does not take a sentence that starts with "Chapter" for a heading', () => {
      const book = parse(
        `Chapter 1\n\n${prose('A')}\nChapter 2 of the report was missing, she said,\nand nobody knew why.\n\nchapter 3\n\n${prose('B')}`,
      );
      expect(titles(book)).toEqual(['Chapter 1']);
      expect(allText(book)).toContain('Chapter 2 of the report was missing');
    });

    it('skips a contents list whose entries carry titles and are listed again in the body', () => {
      const toc = 'CONTENTS\n\nCHAPTER I. The Start\n\nCHAPTER II. The Middle\n\nCHAPTER III. The End\n\n';
      const body = `CHAPTER I. The Start\n\n${prose('A')}\n\nCHAPTER II. The Middle\n\n${prose('B')}\n\nCHAPTER III. The End\n\n${prose('C')}`;
      const book = parse(toc + body);
      expect(titles(book)).toEqual(['CHAPTER I. The Start', 'CHAPTER II. The Middle', 'CHAPTER III. The End']);
      expect(book.chapters[0].paragraphs[0].text).toBe(prose('A'));
    });

    it('falls back to bare roman numerals only when they count 1, 2, 3…', () => {
      const numbered = parse(`I.\n\n${prose('A')}\n\nII.\n\n${prose('B')}\n\nIII. A STRANGE VISIT\n\n${prose('C')}`);
      expect(titles(numbered)).toEqual(['I.', 'II.', 'III. A STRANGE VISIT']);
      const stray = parse(`${prose('A')}\n\nV.\n\n${prose('B')}\n\nX.\n\n${prose('C')}`);
      expect(titles(stray)).toEqual(['The Book']);
    });

    it('uses parts when there are no chapters, and drops part lines above chapters', () => {
      expect(titles(parse(`PART ONE\n\n${prose('A')}\n\nPART TWO\n\n${prose('B')}`))).toEqual(['PART ONE', 'PART TWO']);
      const book = parse(`BOOK I\n\nChapter 1\n\n${prose('A')}\n\nBOOK II\n\nChapter 1\n\n${prose('B')}`);
      expect(titles(book)).toEqual(['Chapter 1', 'Chapter 1']);
      expect(allText(book)).not.toContain('BOOK');
    });

    it('keeps a long preface before the first chapter as front matter, and drops a title page', () => {
      const withPreface = parse(`PREFATORY NOTE\n\n${prose('The author', 12)}\n\nChapter 1\n\n${prose('A')}`);
      expect(titles(withPreface)).toEqual(['Front matter', 'Chapter 1']);
      const withTitlePage = parse(`THE BOOK\n\nby Someone\n\nChapter 1\n\n${prose('A')}`);
      expect(titles(withTitlePage)).toEqual(['Chapter 1']);
    });

    it('gives front matter, a preface or an introduction before chapter 1 index 0, and keeps the chapters’ numbers', () => {
      const chapters = (text: string) => parse(text).chapters.map((c) => [c.index, c.title]);
      expect(chapters(`PREFATORY NOTE\n\n${prose('The author', 12)}\n\nChapter 1\n\n${prose('A')}`)).toEqual([
        [0, 'Front matter'],
        [1, 'Chapter 1'],
      ]);
      expect(
        chapters(
          `PREFACE\n\n${prose('P')}\n\nINTRODUCTION\n\n${prose('I')}\n\nCHAPTER I.\n\n${prose('A')}\n\nCHAPTER II.\n\n${prose('B')}`,
        ),
      ).toEqual([
        [0, 'PREFACE'],
        [0, 'INTRODUCTION'],
        [1, 'CHAPTER I.'],
        [2, 'CHAPTER II.'],
      ]);
    });

    it('counts an unnumbered section after a chapter with the next chapter, and numbering that restarts by rank', () => {
      const chapters = (text: string) => parse(text).chapters.map((c) => [c.index, c.title]);
      expect(
        chapters(
          `I.\n\n${prose('A')}\n\nII.\n\n${prose('B')}\n\nEPILOGUE\n\n${prose('C')}\n\nAFTERWORD\n\n${prose('D')}`,
        ),
      ).toEqual([
        [1, 'I.'],
        [2, 'II.'],
        [3, 'EPILOGUE'],
        [3, 'AFTERWORD'],
      ]);
      // two Books, each with its own Chapter 1: the second is the book's chapter 2
      expect(chapters(`BOOK I\n\nChapter 1\n\n${prose('A')}\n\nBOOK II\n\nChapter 1\n\n${prose('B')}`)).toEqual([
        [1, 'Chapter 1'],
        [2, 'Chapter 1'],
      ]);
    });

    it('makes a text without headings one chapter named after the book', () => {
      const book = parse(`\uFEFF${prose('A')}\r\n\r\n${prose('B')}\r\n`);
      expect(book.chapters).toEqual([
        {
          index: 1,
          title: 'The Book',
          paragraphs: [prose('A'), prose('B')].map((text) => ({ text, page: null, section: null })),
        },
      ]);
    });
  });
});
