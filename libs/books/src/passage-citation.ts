import type { Citation } from '@parley/conversation';
import { SearchHit } from './book.types';

/** A stored passage, as the agent's tools return it. */
type Passage = Omit<SearchHit, 'score'>;

/** Where a passage stands, as a tool result names it: "Chapter 3 · A section · p. 12". */
export function locate(p: Pick<Passage, 'chapter' | 'section' | 'page'>): string {
  return [p.chapter, p.section, p.page === null ? null : `p. ${p.page}`].filter(Boolean).join(' · ');
}

/** A passage as a tool result's citation of it; `bookId` when the conversation has several books. */
export function citationOf(p: Passage, score: number, bookId?: string): Citation {
  return {
    chunkId: p.chunkId,
    chapter: p.chapter,
    chapterIndex: p.chapterIndex,
    section: p.section,
    page: p.page,
    score,
    ...(bookId !== undefined ? { bookId } : {}),
  };
}
