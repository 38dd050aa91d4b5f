import {
  EPUB2_FACTS,
  epub2Book,
  EPUB3_FACTS,
  epub3Book,
  obfuscatedFontEpub,
  zipOf,
} from '../../../../../test/support/book-fixtures';
import { ParsedBook } from '../parsed-book';
import { parseEpub } from './epub-parser';

const opts = { fallbackTitle: 'Upload' };

/** The chapter holding a passage with this text, and the paragraph. */
function find(book: ParsedBook, text: string) {
  for (const c of book.chapters)
    for (const p of c.paragraphs)
      if (p.text.includes(text)) return { chapter: c.title, section: p.section, text: p.text };
  return null;
}

const allText = (book: ParsedBook) => book.chapters.flatMap((c) => c.paragraphs.map((p) => p.text)).join('\n');

describe(parseEpub.name, () => {
  describe('EPUB 3 (nav, landmarks, parts, nested sections, notes)', () => {
    let book: ParsedBook;
    beforeAll(async () => {
      book = await parseEpub(await epub3Book(), opts);
    });

    it("names the chapters as the nav does, in the spine's order, counting them as the reading position does", () => {
      // the parts hold the chapters; copyright, notes and index are no chapters; the preface is 0
      expect(book.chapters.map(({ index, title }) => ({ index, title }))).toEqual(EPUB3_FACTS.chapters);
    });

    it('takes the title and the author (not the illustrator) from the package metadata', () => {
      expect(book.metadata).toEqual({ title: EPUB3_FACTS.title, author: EPUB3_FACTS.author });
    });

    it('keeps each passage in its chapter, the nested entries as its sections', () => {
      for (const p of EPUB3_FACTS.passages) expect(find(book, p.text)?.chapter).toBe(p.chapter);
      expect(find(book, 'crossed the ford')?.section).toBe('The Ford');
      expect(find(book, 'falls of Carrowmore')?.section).toBe('The Falls');
    });

    it('keeps a footnote and an endnote with the chapter that refers to them, as its Notes', () => {
      expect(find(book, EPUB3_FACTS.footnote.text)).toMatchObject({
        chapter: EPUB3_FACTS.footnote.chapter,
        section: 'Notes',
      });
      expect(find(book, EPUB3_FACTS.endnote.text)).toMatchObject({
        chapter: EPUB3_FACTS.endnote.chapter,
        section: 'Notes',
      });
      // the backlink arrow is not text, and the note is told once
      expect(find(book, EPUB3_FACTS.endnote.text)!.text).not.toMatch(/↩/);
      expect(allText(book).split(EPUB3_FACTS.endnote.text)).toHaveLength(2);
    });

    it("keeps an image's alt text and a figure's caption as text of their chapter", () => {
      expect(find(book, EPUB3_FACTS.alt.text)).toMatchObject({ chapter: EPUB3_FACTS.alt.chapter });
      expect(find(book, EPUB3_FACTS.alt.text)!.text).toBe('[Image: A compass rose drawn in vermilion ink]');
      expect(find(book, EPUB3_FACTS.caption.text)).toMatchObject({ chapter: EPUB3_FACTS.caption.chapter });
    });

    it("drops the cover, copyright page, table of contents and index, and the chapters' repeated headings", () => {
      for (const word of EPUB3_FACTS.dropped) expect(allText(book)).not.toContain(word);
      expect(allText(book)).not.toContain('[Image: Cover]');
      expect(allText(book)).not.toMatch(/^Contents$/m);
      expect(book.chapters[1].paragraphs[0].text).toMatch(/^Ysolde unrolled/);
    });
  });

  describe('EPUB 2 (NCX, guide, XHTML 1.1)', () => {
    let book: ParsedBook;
    beforeAll(async () => {
      book = await parseEpub(await epub2Book(), opts);
    });

    it('names the chapters as the NCX does: the books holding them are no chapters, the title page and colophon dropped', () => {
      expect(book.chapters.map(({ index, title }) => ({ index, title }))).toEqual(EPUB2_FACTS.chapters);
      for (const word of EPUB2_FACTS.dropped) expect(allText(book)).not.toContain(word);
    });

    it('takes title and author (opf:role aut) from the metadata, and reads named entities of XHTML 1.1', () => {
      expect(book.metadata).toEqual({ title: EPUB2_FACTS.title, author: EPUB2_FACTS.author });
      expect(find(book, 'quince trees in the spring')).not.toBeNull(); // &nbsp; read as a space
    });

    it('moves a note linked only by its marker, from a document outside the reading order, to its chapter', () => {
      expect(find(book, EPUB2_FACTS.footnote.text)).toMatchObject({
        chapter: EPUB2_FACTS.footnote.chapter,
        section: 'Notes',
      });
      expect(find(book, 'frost reached the cellar')!.text).not.toMatch(/cellar1/);
    });

    it("keeps a book's part text (an epigraph on its title page) with the part's first chapter", () => {
      expect(find(book, 'Spring, and then the long summer.')).toMatchObject({
        chapter: EPUB2_FACTS.chapters[0].title,
        section: 'Book One',
      });
      expect(find(book, EPUB2_FACTS.alt.text)?.chapter).toBe(EPUB2_FACTS.alt.chapter);
    });
  });

  it('reads an EPUB whose only encryption is font obfuscation', async () => {
    expect((await parseEpub(await obfuscatedFontEpub(), opts)).chapters).toHaveLength(4);
  });

  it('lands no entry on a document without text, and reads bare roman numerals as chapter numbers', async () => {
    // the nav links to itself and to a cover without alt text: neither may take the next entry's place
    const epub = await miniEpub(
      [
        ['cover.xhtml', '<img src="c.png"/>'],
        [
          'nav.xhtml',
          '<nav epub:type="toc"><ol><li><a href="cover.xhtml">Cover</a></li><li><a href="nav.xhtml">Contents</a></li><li><a href="one.xhtml">I</a></li><li><a href="two.xhtml">II</a></li></ol></nav>',
        ],
        ['one.xhtml', '<h1>I</h1><p>The first.</p>'],
        ['two.xhtml', '<h1>II</h1><p>The second.</p>'],
      ],
      'nav.xhtml',
    );
    const book = await parseEpub(epub, opts);
    expect(book.chapters.map((c) => [c.index, c.title, c.paragraphs.map((p) => p.text)])).toEqual([
      [1, 'I', ['The first.']],
      [2, 'II', ['The second.']],
    ]);
  });

  it("leaves out a chapter's title set as a styled paragraph, not a sentence that begins with it", async () => {
    const epub = await miniEpub(
      [
        ['nav.xhtml', '<nav epub:type="toc"><ol><li><a href="two.xhtml">Chapter 2</a></li></ol></nav>'],
        ['two.xhtml', '<p class="chaptitle">Chapter 2</p><p>Chapter 2 began badly, as chapters do.</p>'],
      ],
      'nav.xhtml',
    );
    expect((await parseEpub(epub, opts)).chapters).toEqual([
      {
        index: 2,
        title: 'Chapter 2',
        paragraphs: [{ text: 'Chapter 2 began badly, as chapters do.', page: null, section: null }],
      },
    ]);
  });

  it("falls back on the documents' headings when there is no table of contents", async () => {
    const doc = (body: string) =>
      `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>${body}</body></html>`;
    const epub = await zipOf([
      { name: 'mimetype', data: 'application/epub+zip', store: true },
      {
        name: 'META-INF/container.xml',
        data: '<container><rootfiles><rootfile full-path="book.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
      },
      {
        name: 'book.opf',
        data: `<package version="2.0"><metadata><title>Bare</title></metadata><manifest>
          <item id="a" href="a.html" media-type="application/xhtml+xml"/><item id="b" href="b.html" media-type="application/xhtml+xml"/>
          </manifest><spine><itemref idref="a"/><itemref idref="b"/></spine></package>`,
      },
      { name: 'a.html', data: doc('<h1>Chapter 1</h1><p>The first one.</p>') },
      { name: 'b.html', data: doc('<p>Still the first.</p><h1>Chapter 2</h1><p>The second one.</p>') },
    ]);
    const book = await parseEpub(epub, opts);
    expect(book.metadata).toEqual({ title: 'Bare', author: null });
    expect(book.chapters.map((c) => [c.index, c.title, c.paragraphs.map((p) => p.text)])).toEqual([
      [1, 'Chapter 1', ['The first one.', 'Still the first.']],
      [2, 'Chapter 2', ['The second one.']],
    ]);
  });
});

/** An EPUB 3 of these documents, all in the spine in order; `nav` names the navigation document. */
function miniEpub(docs: [string, string][], nav: string): Promise<Buffer> {
  const xhtml = (body: string) =>
    `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>x</title></head><body>${body}</body></html>`;
  const items = docs
    .map(
      ([href], i) =>
        `<item id="d${i}" href="${href}" media-type="application/xhtml+xml"${href === nav ? ' properties="nav"' : ''}/>`,
    )
    .join('');
  const spine = docs.map((_, i) => `<itemref idref="d${i}"/>`).join('');
  return zipOf([
    { name: 'mimetype', data: 'application/epub+zip', store: true },
    {
      name: 'META-INF/container.xml',
      data: '<container><rootfiles><rootfile full-path="book.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    },
    {
      name: 'book.opf',
      data: `<package version="3.0"><metadata><title>Mini</title></metadata><manifest>${items}</manifest><spine>${spine}</spine></package>`,
    },
    ...docs.map(([href, body]) => ({ name: href, data: xhtml(body) })),
  ]);
}
