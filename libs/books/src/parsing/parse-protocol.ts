import { BookProblemCode, BookRejectedError } from '../book.errors';
import { BookFormat, ChapterRef } from '../book.types';
import { ChunkDraft } from '../chunking/chunker';
import { BookMetadata } from './parsed-book';
import { ParseLimits } from './parse-limits';

/** Parent → parser process: the one request. */
export interface ChildRequest {
  format: BookFormat;
  content: Uint8Array;
  title: string;
  limits: ParseLimits;
}

export interface ParseProgress {
  phase: 'scanning' | 'parsing';
  pagesDone?: number;
  pagesTotal?: number;
}

/** Parser process → parent. */
export type ChildReply =
  | ({ type: 'progress' } & ParseProgress)
  | { type: 'done'; chapters: ChapterRef[]; chunks: ChunkDraft[]; metadata: BookMetadata | null }
  | { type: 'refused'; status: BookRejectedError['status']; code: BookProblemCode; message: string };
