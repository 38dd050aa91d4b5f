import { BookRejectedError } from '../book.errors';
import { ZipArchive } from './archive/zip-archive';
import { parseHtml } from './markup/html-parser';
import { elementsNamed, parseXml, textOf } from './markup/xml-tree';
import { looksLikeOle } from './parse-book';
import { DEFAULT_MAX_EXPANDED_BYTES, metadataText, ParsedBook, ParseOptions } from './parsed-book';

/** The parts of an Office document that are XML (and so may declare entities). */
const XML_PART = /\.(xml|rels)$/i;

/**
 * A Word document (.docx): checked as a zip first (bombs, paths, every XML part for entity
 * declarations, every entry inflated once under the bounds, so mammoth meets none of them),
 * then turned into HTML by mammoth (headings from the Heading 1–6 styles, footnotes and endnotes
 * as notes, images as their alt text; nothing outside the file is read) and read as HTML.
 * Title and author from the document's properties (docProps/core.xml).
 */
export async function parseDocx(bytes: Buffer, opts: ParseOptions): Promise<ParsedBook> {
  // an OLE compound file: a Word 97–2003 .doc, or a password-protected .docx (encrypted inside one)
  if (looksLikeOle(bytes)) throw oleDocument(bytes);
  const zip = await ZipArchive.open(bytes, opts.maxExpandedBytes ?? DEFAULT_MAX_EXPANDED_BYTES);
  let properties: { title: string | null; author: string | null } = { title: null, author: null };
  try {
    if (!zip.find('word/document.xml'))
      throw new BookRejectedError(422, 'the file is not a Word document (no word/document.xml)', 'book_parse_failed');
    for (const name of zip.names()) {
      if (!XML_PART.test(name)) {
        await zip.count(name);
        continue;
      }
      const xml = await zip.readXml(name);
      if (name.toLowerCase() === 'docprops/core.xml') properties = coreProperties(xml);
    }
  } finally {
    zip.close();
  }
  const mammoth = await import('mammoth');
  const { value: html } = await mammoth.convertToHtml(
    { buffer: bytes },
    // images are not read: their alt text is all a reader of the text gets
    { convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: '' })), externalFileAccess: false },
  );
  const book = parseHtml(html, opts);
  return {
    chapters: book.chapters,
    metadata: { title: properties.title ?? book.metadata?.title ?? null, author: properties.author },
  };
}

function coreProperties(xml: string): { title: string | null; author: string | null } {
  const doc = parseXml(xml);
  const first = (name: string) => metadataText(elementsNamed(doc, name).map(textOf).find(Boolean));
  return { title: first('title'), author: first('creator') };
}

/** A .doc or an encrypted .docx: the latter holds an `EncryptedPackage` stream (its name in UTF-16). */
function oleDocument(bytes: Buffer): BookRejectedError {
  if (bytes.includes(Buffer.from('EncryptedPackage', 'utf16le')))
    return new BookRejectedError(422, 'the Word document is password-protected', 'book_encrypted');
  return new BookRejectedError(
    422,
    'the file is a Word 97–2003 document (.doc), not a .docx: save it as .docx',
    'book_parse_failed',
  );
}
