import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { WholeBookPassage, WholeBookText } from '@parley/agent';
import { BookReader } from './catalogue/book-reader';
import { BookShelf } from './catalogue/book-shelf.repository';
import { PASSAGE_COLUMNS, passageOf, PassageRow } from './search/passages.repository';

/** ≈ 4 characters a token, as the history budget counts, plus each passage's block wrapping in the request. */
const CHARS_PER_TOKEN = 4;
const BLOCK_OVERHEAD_CHARS = 30;
/** the shortest repeated text taken for the chunker's overlap (shorter matches may be chance) */
const MIN_OVERLAP_CHARS = 20;
/**
 * the longest overlap the chunker makes (overlapChars, 300, or one sentence, at most
 * maxChars − minChars = 400), with room: a longer repeat is the book's own text, not overlap
 */
const MAX_OVERLAP_CHARS = 450;

export const passageTokens = (chars: number, passages: number): number =>
  Math.ceil((chars + passages * BLOCK_OVERHEAD_CHARS) / CHARS_PER_TOKEN);

/**
 * The conversation's books as whole-book retrieval reads them: their size up to a reading
 * position (to choose the mode) and their passages up to there (for the request), only for a
 * reader who may read them now (their own, or their tenant's catalogue) and only when ready.
 * Nothing past the position is ever read. A catalogue book reads the same for every reader, so
 * their requests share the provider's cached prefix.
 */
@Injectable()
export class WholeBooks {
  /** characters and passages per chapter index, by book: a ready book's text never changes */
  private readonly sizes = new Map<string, Array<{ chapterIndex: number; chars: number; passages: number }>>();

  constructor(
    @Inject(Pool) private readonly pool: Pool,
    private readonly shelf: BookShelf,
  ) {}

  /**
   * The estimated tokens of the books up to `maxChapter` (null: whole), or null when one is
   * missing, not ready, or not the reader's to read.
   */
  async tokensUpTo(reader: BookReader, bookIds: string[], maxChapter: number | null): Promise<number | null> {
    let tokens = 0;
    for (const bookId of bookIds) {
      const book = (await this.shelf.find(reader, bookId))?.book;
      if (!book || book.status !== 'ready') return null;
      const sizes = (await this.chapterSizes(bookId)).filter(
        (s) => maxChapter === null || s.chapterIndex <= maxChapter,
      );
      tokens += passageTokens(
        sizes.reduce((n, s) => n + s.chars, 0),
        sizes.reduce((n, s) => n + s.passages, 0),
      );
    }
    return tokens;
  }

  /** The books' passages up to `maxChapter` (null: whole), in the order of `bookIds`; books the reader may not read now, or unready, left out. */
  async upTo(reader: BookReader, bookIds: string[], maxChapter: number | null): Promise<WholeBookText[]> {
    const out: WholeBookText[] = [];
    for (const bookId of bookIds) {
      const book = (await this.shelf.find(reader, bookId))?.book;
      if (!book || book.status !== 'ready') continue;
      out.push({ bookId, title: book.title, passages: await this.passages(bookId, maxChapter) });
    }
    return out;
  }

  /** The passages of chapters ≤ maxChapter, in book order, without the chunker's overlap. */
  private async passages(bookId: string, maxChapter: number | null): Promise<WholeBookPassage[]> {
    const { rows } = await this.pool.query<PassageRow>(
      `SELECT ${PASSAGE_COLUMNS} FROM book_chunks
        WHERE book_id = $1 AND ($2::int IS NULL OR chapter_index <= $2) ORDER BY ordinal`,
      [bookId, maxChapter],
    );
    return withoutOverlap(rows.map(passageOf));
  }

  /** Per chapter index, the characters and passages whole-book retrieval sends (read once per book). */
  private async chapterSizes(bookId: string) {
    const cached = this.sizes.get(bookId);
    if (cached) return cached;
    const sizes: Array<{ chapterIndex: number; chars: number; passages: number }> = [];
    for (const p of await this.passages(bookId, null)) {
      const last = sizes[sizes.length - 1];
      if (last?.chapterIndex === p.chapterIndex) {
        last.chars += p.text.length;
        last.passages++;
      } else sizes.push({ chapterIndex: p.chapterIndex, chars: p.text.length, passages: 1 });
    }
    if (this.sizes.size >= 10_000) this.sizes.clear(); // bound the memory; a size is cheap to read again
    this.sizes.set(bookId, sizes);
    return sizes;
  }
}

/**
 * The passages with the text each repeats from the one before cut off (the chunker overlaps
 * them so a search hit reads whole; a book read whole would read it twice). A passage nothing
 * is left of is dropped. Deterministic, so the same chapters always make the same prompt.
 */
export function withoutOverlap(passages: WholeBookPassage[]): WholeBookPassage[] {
  const out: WholeBookPassage[] = [];
  let previous: WholeBookPassage | undefined;
  for (const p of passages) {
    const repeated = previous && previous.chapterIndex === p.chapterIndex ? overlapLength(previous.text, p.text) : 0;
    const text = p.text.slice(repeated).trim();
    previous = p;
    if (text) out.push(repeated ? { ...p, text } : p);
  }
  return out;
}

/** The length of the longest end of `before` that `after` begins with (0 under MIN_OVERLAP_CHARS). */
export function overlapLength(before: string, after: string): number {
  const head = after.slice(0, MIN_OVERLAP_CHARS);
  if (head.length < MIN_OVERLAP_CHARS) return 0;
  const from = Math.max(0, before.length - MAX_OVERLAP_CHARS);
  for (let at = before.indexOf(head, from); at >= 0; at = before.indexOf(head, at + 1)) {
    const tail = before.slice(at);
    if (after.startsWith(tail)) return tail.length;
  }
  return 0;
}
