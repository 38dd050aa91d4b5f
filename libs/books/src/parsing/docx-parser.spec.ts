import { billionLaughsDocx, DOCX_FACTS, docxBook, zipBombDocx } from '../../../../test/support/book-fixtures';
import { parseDocx } from './docx-parser';
import { refusalOf } from '../../../../test/support/book-refusals';

const opts = { fallbackTitle: 'Upload' };

describe(parseDocx.name, () => {
  it('reads Heading 1 paragraphs as chapters, Heading 2 as sections, the footnote with its chapter, the alt text', async () => {
    const book = await parseDocx(await docxBook(), opts);
    expect(book.metadata).toEqual({ title: DOCX_FACTS.title, author: DOCX_FACTS.author });
    expect(book.chapters.map(({ index, title }) => ({ index, title }))).toEqual(DOCX_FACTS.chapters);
    const where = (text: string) =>
      book.chapters.flatMap((c) => c.paragraphs.filter((p) => p.text.includes(text)).map((p) => [c.title, p.section]));
    for (const p of DOCX_FACTS.passages) expect(where(p.text)[0]?.[0]).toBe(p.chapter);
    expect(where('lifeboat station')).toEqual([['Week 1: Cliffs', 'Field trip']]);
    expect(where(DOCX_FACTS.footnote.text)).toEqual([[DOCX_FACTS.footnote.chapter, 'Notes']]);
    expect(where(DOCX_FACTS.alt.text)).toEqual([[DOCX_FACTS.alt.chapter, null]]);
    // the footnote marker is not left in the sentence
    expect(where('wave-cut notch and the rock')).toHaveLength(1);
  });

  it('refuses a document part declaring entities before mammoth reads it', async () => {
    expect(await refusalOf(parseDocx(await billionLaughsDocx(), opts))).toMatchObject({
      status: 422,
      code: 'book_xml_entities',
      message: expect.stringMatching(/word\/document\.xml/),
    });
  });

  it('refuses a zip bomb', async () => {
    const bomb = await zipBombDocx(64);
    const r = await refusalOf(parseDocx(bomb, { ...opts, maxExpandedBytes: bomb.length * 50 }));
    expect(r).toMatchObject({ status: 422, code: 'book_zip_bomb' });
  });

  it('tells a password-protected document (book_encrypted) from a Word 97–2003 one', async () => {
    const ole = (body: string) =>
      Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(504), Buffer.from(body, 'utf16le')]);
    expect(await refusalOf(parseDocx(ole('EncryptedInfo EncryptedPackage'), opts))).toMatchObject({
      code: 'book_encrypted',
    });
    expect(await refusalOf(parseDocx(ole('WordDocument'), opts))).toMatchObject({
      code: 'book_parse_failed',
      message: expect.stringMatching(/\.doc/),
    });
  });
});
