import { epub3Book } from '../../../test/support/book-fixtures';
import { formatOfFile } from './book-format';
import { BookRejectedError } from './book.errors';
import { checkUpload } from './upload-check';

const WORD = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

describe(formatOfFile.name, () => {
  it.each([
    ['book.epub', '', 'epub'],
    ['page.HTML', '', 'html'],
    ['page.htm', '', 'html'],
    ['chapter.xhtml', '', 'html'],
    ['notes.docx', '', 'docx'],
    ['upload', 'application/epub+zip', 'epub'],
    ['upload', 'text/html; charset=utf-8', 'html'],
    ['upload', 'application/xhtml+xml', 'html'],
    ['upload', WORD, 'docx'],
    ['book.txt', 'application/epub+zip', 'text'],
    ['upload', 'application/octet-stream', null],
    ['book.doc', '', null],
  ])('%s (%s) is %s', (name, type, format) => {
    expect(formatOfFile(name, type)).toBe(format);
  });
});

describe(checkUpload.name, () => {
  const refusal = (input: Parameters<typeof checkUpload>[0]) => {
    try {
      checkUpload(input);
      return null;
    } catch (e) {
      return e instanceof BookRejectedError ? { status: e.status, message: e.message } : e;
    }
  };

  it('accepts an EPUB or DOCX that starts as a zip (or, for DOCX, as an OLE file: maybe password-protected)', async () => {
    const epub = await epub3Book();
    expect(checkUpload({ title: 'T', format: 'epub', content: epub })).toMatchObject({
      format: 'epub',
      titleGiven: true,
    });
    expect(checkUpload({ title: 'T', format: 'docx', content: epub, titleGiven: false }).titleGiven).toBe(false);
    const ole = Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(100)]);
    expect(refusal({ title: 'T', format: 'docx', content: ole })).toBeNull();
    expect(refusal({ title: 'T', format: 'epub', content: ole })).toEqual({
      status: 415,
      message: 'the file is not an EPUB (a zip archive)',
    });
  });

  it('checks HTML as text', () => {
    expect(refusal({ title: 'T', format: 'html', content: '<p>Words</p>' })).toBeNull();
    expect(refusal({ title: 'T', format: 'html', content: Buffer.from([0x3c, 0x70, 0xff, 0xfe]) })).toMatchObject({
      status: 415,
    });
  });
});
