import { BookRejectedError } from './book.errors';
import { BOOK_FORMATS, BookFormat, IngestBookInput, MAX_BOOK_BYTES } from './book.types';
import { decodeText, looksLikeOle, looksLikePdf, looksLikeZip } from './parsing/parse-book';

export const MAX_TITLE_CHARS = 200;

/** A checked upload, ready to store. */
export interface AcceptedUpload {
  title: string;
  author: string | null;
  format: BookFormat;
  bytes: Buffer;
  /** the uploader chose the title (else the book's own, once parsed, replaces it) */
  titleGiven: boolean;
}

/**
 * The checks that cost nothing: fields, size, declared type against the bytes (PDF's magic bytes,
 * a zip's local header for EPUB and DOCX), UTF-8 for text. What an archive holds is for the
 * bounded parser process to find out.
 */
export function checkUpload(input: IngestBookInput): AcceptedUpload {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(`${input.title ?? ''}${input.author ?? ''}`)) {
    throw new BookRejectedError(400, 'title and author must not contain control characters');
  }
  const title = input.title?.trim() ?? '';
  if (!title || title.length > MAX_TITLE_CHARS) {
    throw new BookRejectedError(400, `title must be 1..${MAX_TITLE_CHARS} characters`);
  }
  const author = input.author?.trim() || null;
  if (author && author.length > MAX_TITLE_CHARS)
    throw new BookRejectedError(400, `author must be at most ${MAX_TITLE_CHARS} characters`);
  if (!BOOK_FORMATS.includes(input.format)) {
    throw new BookRejectedError(415, `format must be one of ${BOOK_FORMATS.join(', ')}`);
  }
  const bytes = typeof input.content === 'string' ? Buffer.from(input.content, 'utf8') : input.content;
  if (bytes.length === 0) throw new BookRejectedError(400, 'the book is empty');
  if (bytes.length > MAX_BOOK_BYTES)
    throw new BookRejectedError(413, `the book is larger than ${MAX_BOOK_BYTES / 1024 / 1024} MB`);
  if (input.format === 'pdf') {
    if (!looksLikePdf(bytes)) throw new BookRejectedError(415, 'the file is not a PDF');
  } else if (input.format === 'epub') {
    if (!looksLikeZip(bytes)) throw new BookRejectedError(415, 'the file is not an EPUB (a zip archive)');
  } else if (input.format === 'docx') {
    // an OLE file may be a password-protected .docx: the parser tells it from a .doc
    if (!looksLikeZip(bytes) && !looksLikeOle(bytes))
      throw new BookRejectedError(415, 'the file is not a Word document (.docx)');
  } else {
    // 415 for binary or non-UTF-8, 400 for no words at all, before anything is stored
    if (!/[\p{L}\p{N}]/u.test(decodeText(bytes)))
      throw new BookRejectedError(400, 'the book has no text', 'book_no_text');
  }
  return { title, author, format: input.format, bytes, titleGiven: input.titleGiven ?? true };
}
