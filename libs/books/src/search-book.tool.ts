import { Injectable } from '@nestjs/common';
import type { AgentTool, ToolContext, ToolOutput } from '@parley/agent';
import type { Citation } from '@parley/conversation';
import { BookNotFoundError } from './book.errors';
import { SearchHit } from './book.types';
import { BooksService } from './books.service';

export const SEARCH_BOOK_MAX_K = 10;
export const SEARCH_BOOK_DEFAULT_K = 5;
const MAX_QUERY_CHARS = 500;

/**
 * `search_book {query, k?}`: full-text search over the conversation's book, limited to the
 * chapters the reader has reached. The passages come back numbered [1], [2]… with their chapter
 * (and page), and `chunks` lists the same passages in the same order: [citationStart + i] is
 * chunks[i] (citationStart defaults to 1, and is higher for a turn's later calls so numbers stay
 * unique within the turn).
 */
@Injectable()
export class SearchBookTool implements AgentTool {
  readonly name = 'search_book';
  readonly description =
    'Searches the text of the book this conversation is about and returns the best-matching passages, numbered [1], [2], … ' +
    "with their chapter (and page when known). Use it before answering anything about the book's content, and cite the passages " +
    'you rely on by their numbers, e.g. [2]. Only chapters the reader has reached are searched. It matches words, not meaning: ' +
    "write the query in the book's likely words (the names, places and objects a passage would contain), not in the reader's " +
    'phrasing and not as a yes/no question. When the question has several parts, send several searches in parallel, one per ' +
    'part. When the passages do not answer the question, search again with other words (another name, a synonym, an object ' +
    'or event the scene would mention) before saying the book does not say.';
  readonly inputSchema = {
    type: 'object' as const,
    properties: {
      query: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_QUERY_CHARS,
        description: "the words the passage would contain (names, places, objects), in the book's wording",
      },
      k: {
        type: 'integer',
        minimum: 1,
        maximum: SEARCH_BOOK_MAX_K,
        description: `how many passages to return (default ${SEARCH_BOOK_DEFAULT_K})`,
      },
    },
    required: ['query'],
  };

  constructor(private readonly books: BooksService) {}

  availableFor(ctx: ToolContext): boolean {
    return ctx.bookId !== null;
  }

  async run(input: unknown, ctx: ToolContext): Promise<ToolOutput> {
    const parsed = parseInput(input);
    if (typeof parsed === 'string') return { isError: true, content: parsed };
    if (!ctx.bookId) return { isError: true, content: 'this conversation has no book to search' };
    ctx.signal?.throwIfAborted();
    let hits: SearchHit[];
    const exclude = new Set(ctx.excludeChunkIds ?? []);
    try {
      ({ items: hits } = await this.books.search(ctx.userId, ctx.bookId, parsed.query, {
        k: Math.min(parsed.k + exclude.size, SEARCH_BOOK_MAX_K * 3),
        maxChapter: ctx.readingPosition,
      }));
      hits = hits.filter((h) => !exclude.has(h.chunkId)).slice(0, parsed.k);
    } catch (e) {
      if (e instanceof BookNotFoundError)
        return { isError: true, content: 'the book of this conversation no longer exists' };
      throw e;
    }
    const scope =
      ctx.readingPosition === null ? '' : ` in chapters 1–${ctx.readingPosition} (the reader has not read further)`;
    if (hits.length === 0) {
      const other = exclude.size ? ' besides those above' : '';
      return { content: `No passages matched "${parsed.query}"${scope}${other}.`, chunks: [] };
    }
    const first = ctx.citationStart ?? 1;
    const passages = hits.map((h, i) => `[${first + i}] ${locate(h)}\n${h.text}`);
    return {
      content: `${hits.length} passage${hits.length === 1 ? '' : 's'} for "${parsed.query}"${scope}:\n\n${passages.join('\n\n')}`,
      chunks: hits.map(toCitation),
    };
  }
}

function locate(h: SearchHit): string {
  return [h.chapter, h.section, h.page === null ? null : `p. ${h.page}`].filter(Boolean).join(' · ');
}

function toCitation(h: SearchHit): Citation {
  return {
    chunkId: h.chunkId,
    chapter: h.chapter,
    chapterIndex: h.chapterIndex,
    section: h.section,
    page: h.page,
    score: h.score,
  };
}

/** The tool's input, or why it is not valid (the model reads the reason and may retry). */
function parseInput(input: unknown): { query: string; k: number } | string {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return 'input must be an object {"query": string, "k"?: integer}';
  }
  const { query, k, ...rest } = input as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) return `unknown input field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`;
  if (typeof query !== 'string' || query.trim() === '') return 'query must be a non-empty string';
  if (query.length > MAX_QUERY_CHARS) return `query must be at most ${MAX_QUERY_CHARS} characters`;
  if (k !== undefined && (typeof k !== 'number' || !Number.isInteger(k) || k < 1 || k > SEARCH_BOOK_MAX_K)) {
    return `k must be an integer from 1 to ${SEARCH_BOOK_MAX_K}`;
  }
  return { query: query.trim(), k: k ?? SEARCH_BOOK_DEFAULT_K };
}
