import { minimalPdf } from '../../../../test/support/minimal-pdf';
import { BookRejectedError } from '../book.errors';
import { MAX_BOOK_BYTES } from '../book.types';
import { parseBook } from './parse-book';
import { pdfItemsToLines } from './pdf-extractor';

const opts = { fallbackTitle: 'Upload' };

async function rejection(p: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof BookRejectedError) return { status: e.status, message: e.message };
    throw e;
  }
  throw new Error('expected a BookRejectedError');
}

describe(parseBook.name, () => {
  describe('refuses', () => {
    it.each([
      ['empty text', 'text', '', 400, /empty/],
      ['empty bytes', 'pdf', Buffer.alloc(0), 400, /empty/],
      ['text with NUL bytes', 'text', Buffer.from('abc\u0000def'), 415, /binary/],
      ['invalid UTF-8', 'markdown', Buffer.from([0x48, 0x69, 0xff, 0xfe, 0x21]), 415, /UTF-8/],
      ['control characters', 'text', '\u0001\u0002\u0003\u0004'.repeat(10), 415, /binary/],
      ['whitespace only', 'text', '  \n\n\t\n', 400, /no text/],
      ['a PDF that is not one', 'pdf', Buffer.from('just text'), 415, /not a PDF/],
      ['a broken PDF', 'pdf', Buffer.from('%PDF-1.4\nnonsense'), 415, /cannot be read/],
    ] as const)('%s', async (_, format, content, status, message) => {
      const r = await rejection(parseBook(format, content, opts));
      expect(r.status).toBe(status);
      expect(r.message).toMatch(message);
    });

    it('a book over 20 MB with 413', async () => {
      const r = await rejection(parseBook('text', Buffer.alloc(MAX_BOOK_BYTES + 1, 'a'), opts));
      expect(r.status).toBe(413);
    });

    it('a PDF without text', async () => {
      const r = await rejection(parseBook('pdf', minimalPdf([[], []]), opts));
      expect(r).toEqual({ status: 400, message: expect.stringMatching(/no extractable text/) });
    });
  });

  it('accepts UTF-8 bytes and strings alike', async () => {
    const text = 'Chapter 1\n\nÉlodie said “hello”.\n\nChapter 2\n\nAnd left.';
    const fromBytes = await parseBook('text', Buffer.from(text, 'utf8'), opts);
    expect(fromBytes).toEqual(await parseBook('text', text, opts));
    expect(fromBytes.chapters[0].paragraphs[0].text).toBe('Élodie said “hello”.');
  });

  it('reads a PDF with pdf.js, keeping the page of each paragraph', async () => {
    const pdf = minimalPdf([
      [
        'Chapter 1',
        '',
        'It was a dark and stormy night; the rain fell in tor-',
        'rents, except at occasional intervals.',
        '',
        'A second paragraph.',
        '1',
      ],
      ['more of the second paragraph, over the page.', '', 'Chapter 2', '', 'The next morning was bright.', '2'],
    ]);
    const book = await parseBook('pdf', pdf, opts);
    expect(book.chapters.map((c) => [c.index, c.title])).toEqual([
      [1, 'Chapter 1'],
      [2, 'Chapter 2'],
    ]);
    expect(book.chapters[0].paragraphs).toEqual([
      {
        text: 'It was a dark and stormy night; the rain fell in torrents, except at occasional intervals.',
        page: 1,
        section: null,
      },
      { text: 'A second paragraph.', page: 1, section: null },
      { text: 'more of the second paragraph, over the page.', page: 2, section: null },
    ]);
    expect(book.chapters[1].paragraphs).toEqual([{ text: 'The next morning was bright.', page: 2, section: null }]);
  });
});

describe(pdfItemsToLines.name, () => {
  it('breaks lines at hasEOL and at a new baseline, paragraphs at wide gaps and page breaks', () => {
    const lines = pdfItemsToLines([
      [
        ['Hello ', false, 72, 700, 10],
        ['world', true, 110, 700, 10],
        ['same para', false, 72, 688, 10],
        ['next para', true, 72, 660, 10],
        ['12', true, 300, 40, 10],
      ],
      [['Page two', true, 72, 700, 10]],
    ]);
    expect(lines).toEqual([
      { text: 'Hello world', page: 1 },
      { text: 'same para', page: 1 },
      { text: '', page: 1 },
      { text: 'next para', page: 1 },
      { text: '', page: 2 },
      { text: 'Page two', page: 2 },
    ]);
  });
});
