import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { SearchHit } from '../book.types';
import { SEARCH_SQL, searchParams } from './search-query';

/** A book's passages found by full-text search (the SQL of search-query.ts). */
@Injectable()
export class PassagesRepository {
  constructor(@Inject(Pool) private readonly pool: Pool) {}

  /** The ids of a book's passages (what a withdrawal takes out of the conversations that quoted them). */
  async idsOf(bookId: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>('SELECT id FROM book_chunks WHERE book_id = $1', [bookId]);
    return rows.map((r) => r.id);
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

/** A stored passage as a search hit with this score. */
export function hitOf(r: PassageRow, score: number): SearchHit {
  return { ...passageOf(r), score };
}
