import * as fixtures from '../../../../test/support/book-fixtures';
import { minimalPdf } from '../../../../test/support/minimal-pdf';
import { MAX_BOOK_BYTES } from '../book.types';
import { parseBook } from './parse-book';
import { pdfItemsToLines } from './pdf-extractor';
import { refusalOf } from '../../../../test/support/book-refusals';

const opts = { fallbackTitle: 'Upload' };

/** The refusal's status and message (its code is asserted where it matters). */
async function rejection(p: Promise<unknown>): Promise<{ status: number; message: string }> {
  const { status, message } = await refusalOf(p);
  return { status, message };
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

  describe('refuses hostile EPUBs and Word documents with a 422 and a code of their own', () => {
    it.each([
      ['a zip bomb (declared)', 'epub', () => fixtures.zipBombEpub(), 'book_zip_bomb'],
      ['a zip bomb (declared small)', 'epub', () => fixtures.lyingZipBombEpub(), 'book_zip_bomb'],
      ['too many entries', 'epub', () => fixtures.manyEntriesEpub(), 'book_zip_bomb'],
      ['an entry out of the archive', 'epub', () => fixtures.pathTraversalEpub(), 'book_zip_unsafe_path'],
      ['an absolute entry', 'epub', () => fixtures.pathTraversalEpub(true), 'book_zip_unsafe_path'],
      ['billion laughs', 'epub', fixtures.billionLaughsEpub, 'book_xml_entities'],
      ['billion laughs in a part the book does not use', 'epub', fixtures.billionLaughsUnusedEpub, 'book_xml_entities'],
      ['an external entity', 'epub', fixtures.externalEntityEpub, 'book_xml_entities'],
      ['DRM', 'epub', fixtures.encryptedEpub, 'book_encrypted'],
      ['a Word zip bomb', 'docx', () => fixtures.zipBombDocx(), 'book_zip_bomb'],
      ['Word billion laughs', 'docx', fixtures.billionLaughsDocx, 'book_xml_entities'],
    ] as const)('%s', async (_, format, make, code) => {
      const bytes = await make();
      // the parser process's bound: 50 times the upload
      expect(await refusalOf(parseBook(format, bytes, { ...opts, maxExpandedBytes: bytes.length * 50 }))).toMatchObject(
        { status: 422, code },
      );
    });

    it('an EPUB that is no zip, or has no package', async () => {
      expect(await rejection(parseBook('epub', Buffer.from('PK\u0003\u0004 no zip'), opts))).toMatchObject({
        status: 422,
      });
      const noPackage = await fixtures.zipOf([{ name: 'mimetype', data: 'application/epub+zip', store: true }]);
      expect(await rejection(parseBook('epub', noPackage, opts))).toEqual({
        status: 422,
        message: 'the EPUB cannot be read: it has no META-INF/container.xml',
      });
    });

    it('an HTML page without text', async () => {
      const r = await rejection(
        parseBook('html', '<html><head><title>T</title></head><body><img src=x></body></html>', opts),
      );
      expect(r).toEqual({ status: 400, message: 'the book has no text' });
    });
  });

  it('reads EPUB, HTML and DOCX with the title and author they state', async () => {
    const cases = [
      ['epub', await fixtures.epub3Book(), fixtures.EPUB3_FACTS],
      ['epub', await fixtures.epub2Book(), fixtures.EPUB2_FACTS],
      ['html', Buffer.from(fixtures.htmlBook()), fixtures.HTML_FACTS],
      ['docx', await fixtures.docxBook(), fixtures.DOCX_FACTS],
    ] as const;
    for (const [format, bytes, facts] of cases) {
      const book = await parseBook(format, bytes, opts);
      expect(book.metadata).toEqual({ title: facts.title, author: facts.author });
      expect(book.chapters.map((c) => c.title)).toEqual(facts.chapters.map((c) => c.title));
    }
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
