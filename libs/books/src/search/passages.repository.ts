import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { SearchHit } from '../book.types';
import { SEARCH_SQL, searchParams } from './search-query';

/** A book's passages found by full-text search (the SQL of search-query.ts). */
@Injectable()
export class PassagesRepository {
  constructor(@Inject(Pool) private readonly pool: Pool) {}

  /** A book's chapters up to `maxChapter` (null: all), in reading order, with how many passages each holds. */
  async chaptersOf(bookId: string, maxChapter: number | null): Promise<ChapterPassages[]> {
    const { rows } = await this.pool.query<{ chapter_index: number; chapter: string; passages: number }>(
      `SELECT chapter_index, chapter, count(*)::int AS passages FROM book_chunks
        WHERE book_id = $1 AND ($2::int IS NULL OR chapter_index <= $2)
        GROUP BY chapter_index, chapter ORDER BY min(ordinal)`,
      [bookId, maxChapter],
    );
    return rows.map((r) => ({ index: r.chapter_index, title: r.chapter, passages: r.passages }));
  }

  /** Up to `count` passages of chapter `chapterIndex`, from its `first` (1-based) on, in reading order. */
  async inChapter(bookId: string, chapterIndex: number, first: number, count: number): Promise<ReadPassage[]> {
    const { rows } = await this.pool.query<PassageRow & { position: number; of: number }>(
      `SELECT * FROM (
         SELECT ${PASSAGE_COLUMNS}, ordinal, row_number() OVER (ORDER BY ordinal)::int AS position,
                count(*) OVER ()::int AS of
           FROM book_chunks WHERE book_id = $1 AND chapter_index = $2) c
        WHERE position >= $3 ORDER BY ordinal LIMIT $4`,
      [bookId, chapterIndex, first, count],
    );
    return rows.map(readPassageOf);
  }

  /** A passage with `before` passages before it and `after` after it, none past chapter `maxChapter` (null: any). */
  async around(
    bookId: string,
    chunkId: string,
    { before, after, maxChapter }: { before: number; after: number; maxChapter: number | null },
  ): Promise<ReadPassage[]> {
    const { rows } = await this.pool.query<PassageRow & { position: number; of: number }>(
      `WITH p AS (SELECT ordinal FROM book_chunks WHERE book_id = $1 AND id = parley_passage_id($2))
       SELECT c.* FROM p, LATERAL (
         SELECT ${PASSAGE_COLUMNS}, ordinal,
                row_number() OVER (PARTITION BY chapter_index ORDER BY ordinal)::int AS position,
                count(*) OVER (PARTITION BY chapter_index)::int AS of
           FROM book_chunks WHERE book_id = $1 AND ($5::int IS NULL OR chapter_index <= $5)) c
        WHERE c.ordinal BETWEEN p.ordinal - $3 AND p.ordinal + $4 ORDER BY c.ordinal`,
      [bookId, chunkId, before, after, maxChapter],
    );
    return rows.map(readPassageOf);
  }

  /**
   * The k best passages for a question, from chapters ≤ maxChapter (null: all), best first,
   * with scores in 0..1.
   */
  async search(bookId: string, query: string, k: number, maxChapter: number | null): Promise<SearchHit[]> {
    const { rows } = await this.pool.query<PassageRow & { score: number }>({
      name: 'books-search',
      text: SEARCH_SQL,
      values: searchParams(bookId, query, maxChapter, k),
    });
    return rows.map((r) => hitOf(r, Math.round(r.score * 10_000) / 10_000));
  }
}

/** A passage as book_chunks stores it (the columns of PASSAGE_COLUMNS). */
export interface PassageRow {
  id: string;
  chapter: string;
  chapter_index: number;
  section: string | null;
  page: number | null;
  text: string;
}

export const PASSAGE_COLUMNS = 'id, chapter, chapter_index, section, page, text';

/** A stored passage as search hits and whole-book documents name it: its id, where it stands, its text. */
export function passageOf(r: PassageRow): Omit<SearchHit, 'score'> {
  return {
    chunkId: r.id,
    chapter: r.chapter,
    chapterIndex: r.chapter_index,
    section: r.section,
    page: r.page,
    text: r.text,
  };
}

/** A chapter as a table of contents lists it. */
export interface ChapterPassages {
  index: number;
  title: string;
  passages: number;
}

/** A passage read in place: where it stands in its chapter (`position` of `of`, from 1). */
export type ReadPassage = Omit<SearchHit, 'score'> & { position: number; of: number };

const readPassageOf = (r: PassageRow & { position: number; of: number }): ReadPassage => ({
  ...passageOf(r),
  position: r.position,
  of: r.of,
});

/** A stored passage as a search hit with this score. */
export function hitOf(r: PassageRow, score: number): SearchHit {
  return { ...passageOf(r), score };
}
