import { parseMarkdown } from './markdown-parser';

const parse = (md: string) => parseMarkdown(md, { fallbackTitle: 'Notes' });
const long = (word: string) => `${word} `.repeat(120).trim();

describe(parseMarkdown.name, () => {
  it('makes # and ## headings chapters and deeper headings sections', () => {
    const book = parse(
      [
        '# Part One',
        '',
        'Opening words.',
        '',
        '## The Voyage',
        '',
        'We sailed at dawn.',
        '',
        '### Storm',
        '',
        'The *wind* rose',
        'all night.',
        '',
        '#### Calm',
        '',
        'Then it fell.',
        '',
        '# Part Two',
        '',
        'Home again.',
      ].join('\n'),
    );
    expect(book.chapters.map((c) => [c.index, c.title])).toEqual([
      [1, 'Part One'],
      [2, 'The Voyage'],
      [3, 'Part Two'],
    ]);
    expect(book.chapters[1].paragraphs).toEqual([
      { text: 'We sailed at dawn.', page: null, section: null },
      { text: 'Storm', page: null, section: 'Storm' },
      { text: 'The *wind* rose all night.', page: null, section: 'Storm' },
      { text: 'Calm', page: null, section: 'Calm' },
      { text: 'Then it fell.', page: null, section: 'Calm' },
    ]);
  });

  it('takes a single # heading above ## chapters for the document title', () => {
    const book = parse('# My Travels\n\n## Chapter 1\n\nFirst.\n\n## Chapter 2\n\nSecond.\n');
    expect(book.chapters.map((c) => c.title)).toEqual(['Chapter 1', 'Chapter 2']);
  });

  it('reads setext headings, strips inline markup from titles and ignores headings in code', () => {
    const book = parse(
      'The **Start**\n=========\n\nText.\n\n```\n# not a heading\n```\n\n[Next](x.md) part\n------\n\nMore.\n\nLast\n===\n\nEnd.\n',
    );
    expect(book.chapters.map((c) => c.title)).toEqual(['The Start', 'Next part', 'Last']);
    expect(book.chapters[0].paragraphs.map((p) => p.text)).toEqual(['Text.', '# not a heading']);
  });

  it('numbers chapters as the book does, with front matter and a preface as 0', () => {
    const book = parse(
      `${long('intro')}\n\n# Preface\n\nWhy.\n\n# Chapter 1: Arrival\n\nOne.\n\n# Chapter 2: The Lamp\n\nTwo.\n\n# Epilogue\n\nAfter.`,
    );
    expect(book.chapters.map((c) => [c.index, c.title])).toEqual([
      [0, 'Front matter'],
      [0, 'Preface'],
      [1, 'Chapter 1: Arrival'],
      [2, 'Chapter 2: The Lamp'],
      [3, 'Epilogue'],
    ]);
    expect(parse(`${long('intro')}\n\n# One\n\nText.\n\n# Two\n\nMore.`).chapters.map((c) => c.index)).toEqual([
      0, 1, 2,
    ]);
  });

  it('keeps long text before the first heading as front matter and a document without headings as one chapter', () => {
    expect(parse(`${long('intro')}\n\n# One\n\nText.`).chapters.map((c) => c.title)).toEqual(['Front matter', 'One']);
    expect(parse(`Short intro.\n\n# One\n\nText.`).chapters.map((c) => c.title)).toEqual(['One']);
    expect(parse('Just some text.\r\n\r\nAnd more.').chapters).toEqual([
      {
        index: 1,
        title: 'Notes',
        paragraphs: [
          { text: 'Just some text.', page: null, section: null },
          { text: 'And more.', page: null, section: null },
        ],
      },
    ]);
  });
});
