import { Injectable } from '@nestjs/common';
import { joinParts, type AgentTool, type ToolContentPart, type ToolContext, type ToolOutput } from '@parley/agent';
import { BookNotFoundError } from './book.errors';
import { SearchHit } from './book.types';
import { BookQueries } from './book-queries';
import { BookSearch } from './book-search';
import { BookReader, turnReader } from './catalogue/book-reader';
import { citationOf, locate } from './passage-citation';

export const SEARCH_BOOK_MAX_K = 10;
export const SEARCH_BOOK_DEFAULT_K = 5;
const MAX_QUERY_CHARS = 500;

/**
 * `search_book {query, k?, book?}`: search over the conversation's books (or the one `book`
 * names), limited to the chapters the reader has reached; with several books the best passages
 * of all of them, each named with its book. The passages come back numbered [1], [2]… with their chapter
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
    'or event the scene would mention) before saying the book does not say. When the conversation has several books, it ' +
    "searches them all and names each passage's book; pass `book` (a book id the conversation was told) to search one.";
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
      book: {
        type: 'string',
        description: "the id of one of the conversation's books, to search only that one (default: all of them)",
      },
    },
    required: ['query'],
  };

  private readonly titles = new Map<string, string>();
  private titlesSince = Date.now();

  constructor(
    private readonly bookSearch: BookSearch,
    private readonly books: BookQueries,
  ) {}

  availableFor(ctx: ToolContext): boolean {
    return ctx.bookIds.length > 0;
  }

  async run(input: unknown, ctx: ToolContext): Promise<ToolOutput> {
    const parsed = parseInput(input);
    if (typeof parsed === 'string') return { isError: true, content: parsed };
    if (ctx.bookIds.length === 0) return { isError: true, content: 'this conversation has no book to search' };
    if (parsed.book !== undefined && !ctx.bookIds.includes(parsed.book)) {
      return {
        isError: true,
        content: `book ${parsed.book} is not one of this conversation's books: ${ctx.bookIds.join(', ')}`,
      };
    }
    ctx.signal?.throwIfAborted();
    const exclude = new Set(ctx.excludeChunkIds ?? []);
    const several = ctx.bookIds.length > 1;
    const searched = parsed.book ? [parsed.book] : ctx.bookIds;
    const reader = turnReader(ctx);
    // each book's best, then the best of all: scores are on one 0..1 scale
    const found = await Promise.all(
      searched.map(async (bookId) => {
        try {
          const { items } = await this.bookSearch.search(reader, bookId, parsed.query, {
            k: Math.min(parsed.k + exclude.size, SEARCH_BOOK_MAX_K * 3),
            maxChapter: ctx.readingPosition,
          });
          return items.map((h) => ({ ...h, bookId }));
        } catch (e) {
          // deleted, withdrawn, or of a tenant the reader left: the other books still answer
          if (e instanceof BookNotFoundError) return null;
          throw e;
        }
      }),
    );
    if (found.every((f) => f === null)) {
      return {
        isError: true,
        content: noLongerThere(searched.length),
      };
    }
    const hits: Array<SearchHit & { bookId: string }> = found
      .flatMap((f) => f ?? [])
      .filter((h) => !exclude.has(h.chunkId))
      .sort((a, b) => b.score - a.score)
      .slice(0, parsed.k);
    const titles = several ? await this.titlesOf(reader, [...new Set(hits.map((h) => h.bookId))]) : new Map();
    const scope =
      ctx.readingPosition === null ? '' : ` in chapters 1–${ctx.readingPosition} (the reader has not read further)`;
    const gone = searched.filter((_, i) => found[i] === null);
    const goneNote = gone.length ? `\n\n${someNoLongerThere(gone)}` : '';
    if (hits.length === 0) {
      const other = exclude.size ? ' besides those above' : '';
      return { content: `No passages matched "${parsed.query}"${scope}${other}.${goneNote}`, chunks: [] };
    }
    const first = ctx.citationStart ?? 1;
    const parts: ToolContentPart[] = [
      `${hits.length} passage${hits.length === 1 ? '' : 's'} for "${parsed.query}"${scope}:`,
    ];
    for (const [i, h] of hits.entries()) {
      const book = several ? `${titles.get(h.bookId) ?? 'a book'} (book ${h.bookId}) · ` : '';
      parts.push(`\n\n[${first + i}] ${book}${locate(h)}\n`, { passage: h.chunkId });
    }
    if (goneNote) parts.push(goneNote);
    const texts = new Map(hits.map((h) => [h.chunkId, h.text]));
    return {
      content: joinParts(parts, (id) => texts.get(id) ?? ''),
      contentParts: parts,
      chunks: hits.map((h) => citationOf(h, h.score, several ? h.bookId : undefined)),
    };
  }

  /** Book titles, read once each (all missing ones in one statement) and again a minute later (a book may be renamed). */
  private async titlesOf(reader: BookReader, bookIds: string[]): Promise<Map<string, string>> {
    if (Date.now() - this.titlesSince > 60_000) {
      this.titles.clear();
      this.titlesSince = Date.now();
    }
    const missing = bookIds.filter((b) => !this.titles.has(b));
    if (missing.length > 0)
      for (const book of await this.books.titlesVisibleTo(reader, missing)) this.titles.set(book.id, book.title);
    if (this.titles.size > 10_000) this.titles.clear();
    return new Map(bookIds.flatMap((id) => (this.titles.has(id) ? [[id, this.titles.get(id)!] as const] : [])));
  }
}

/**
 * What the model reads when every book searched is gone (its reader deleted it, or its publisher
 * withdrew it from the catalogue): enough to tell the reader so rather than fail or guess.
 */
function noLongerThere(books: number): string {
  const the = books > 1 ? 'the books of this conversation are' : 'the book of this conversation is';
  return (
    `${the} no longer available to this reader (deleted, withdrawn from the catalogue by its publisher, or of a ` +
    `catalogue the reader no longer reads), so its text cannot be ` +
    'searched. Tell the reader that plainly, and answer only from what this conversation already holds.'
  );
}

/** What the model reads beside the passages when some of the books searched are gone. */
function someNoLongerThere(bookIds: string[]): string {
  return (
    `Not searched, as no longer available to this reader (deleted, withdrawn, or of a catalogue they no longer read): ` +
    `book ${bookIds.join(', book ')}. Tell the reader so if the question was about ${bookIds.length > 1 ? 'them' : 'it'}.`
  );
}

/** The tool's input, or why it is not valid (the model reads the reason and may retry). */
function parseInput(input: unknown): { query: string; k: number; book?: string } | string {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return 'input must be an object {"query": string, "k"?: integer, "book"?: string}';
  }
  const { query, k, book, ...rest } = input as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) return `unknown input field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`;
  if (typeof query !== 'string' || query.trim() === '') return 'query must be a non-empty string';
  if (query.length > MAX_QUERY_CHARS) return `query must be at most ${MAX_QUERY_CHARS} characters`;
  if (k !== undefined && (typeof k !== 'number' || !Number.isInteger(k) || k < 1 || k > SEARCH_BOOK_MAX_K)) {
    return `k must be an integer from 1 to ${SEARCH_BOOK_MAX_K}`;
  }
  if (book !== undefined && typeof book !== 'string') return 'book must be a book id (a string)';
  return { query: query.trim(), k: k ?? SEARCH_BOOK_DEFAULT_K, ...(book !== undefined ? { book } : {}) };
}
