/** The formats a book may be uploaded in. */
export const BOOK_FORMATS = ['text', 'markdown', 'pdf', 'epub', 'html', 'docx'] as const;
export type BookFormat = (typeof BOOK_FORMATS)[number];

/** The formats whose content is bytes (base64 in a JSON upload); the others are UTF-8 text. */
export const BINARY_BOOK_FORMATS: readonly BookFormat[] = ['pdf', 'epub', 'docx'];

/** The largest upload accepted, in bytes (docs/api.md: oversize answers 413). */
export const MAX_BOOK_BYTES = 20 * 1024 * 1024;

export interface IngestBookInput {
  title: string;
  author?: string | null;
  format: BookFormat;
  /** text, markdown and html as a string or UTF-8 bytes; pdf, epub and docx as bytes */
  content: string | Buffer;
  /**
   * whether the uploader chose the title (false: it is the file's name), so a title the book
   * states (an EPUB's metadata, a Word document's properties, an HTML <title>) replaces it once
   * parsed; the same for a missing author. Default true.
   */
  titleGiven?: boolean;
}

export interface ChapterRef {
  /**
   * The book's own chapter number, what a conversation's readingPosition counts: "Chapter 6" is 6;
   * front matter, a preface or prefatory letters before chapter 1 are 0; an unnumbered section
   * after a chapter (an epilogue) counts with the next one. Not unique, rising in book order.
   */
  index: number;
  title: string;
}

export type BookStatus = 'ingesting' | 'ready' | 'failed';

/** A reader's own book, or one of a tenant's catalogue that every reader of the tenant may use. */
export const BOOK_VISIBILITIES = ['private', 'catalogue'] as const;
export type BookVisibility = (typeof BOOK_VISIBILITIES)[number];

/** How far an ingestion got: written by the worker as it goes, read by GET /books/:id and its SSE. */
export interface BookProgress {
  phase: 'queued' | 'scanning' | 'parsing' | 'storing' | 'embedding' | 'done' | 'failed';
  /** the upload's size */
  bytesTotal: number;
  /** PDF pages read so far, of pagesTotal */
  pagesDone?: number;
  pagesTotal?: number;
  /** passages stored so far, of chunksTotal (known once parsed) */
  chunksWritten: number;
  chunksTotal?: number;
  /** passages embedded so far, of embeddingsTotal (with an embeddings provider only) */
  embeddingsWritten?: number;
  embeddingsTotal?: number;
}

export interface Book {
  id: string;
  title: string;
  author: string | null;
  format: BookFormat;
  /** 'private': the uploader's own; 'catalogue': published for every reader of its tenant */
  visibility: BookVisibility;
  /** only a 'ready' book can be searched or talked about */
  status: BookStatus;
  chapters: ChapterRef[];
  chunkCount: number;
  progress: BookProgress;
  /** why ingestion failed; present only when status is 'failed' */
  error?: { code: string; message: string };
  /**
   * the book's vectors for semantic search, when an embeddings provider was configured: 'failed'
   * (or another model than the one configured) leaves it searchable by full text only
   */
  embeddings?: { status: 'embedding' | 'ready' | 'failed'; model: string };
  createdAt: string;
}

export interface SearchOptions {
  /** passages to return: default 5, at most 20 */
  k?: number;
  /** highest chapter index to search (inclusive); null or undefined = the whole book */
  maxChapter?: number | null;
}

export interface SearchHit {
  chunkId: string;
  chapter: string;
  chapterIndex: number;
  section: string | null;
  page: number | null;
  text: string;
  /** 0..1, higher is better */
  score: number;
}

export interface SearchResult {
  items: SearchHit[];
}
