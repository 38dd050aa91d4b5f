import { Injectable } from '@nestjs/common';
import type { ToolContext, ToolOutput } from '@parley/agent';
import { BOOK_PARAMETER, bookToRead, ReadingTool, readingScope } from './conversation-books';

/**
 * `list_chapters {book?}`: a book's table of contents up to the reader's position, each chapter
 * with its number (what `read_passage` and the reading position count) and how many passages it
 * holds. Chapters past the reading position are not named: their titles can spoil.
 */
@Injectable()
export class ListChaptersTool extends ReadingTool {
  readonly name = 'list_chapters';
  readonly description =
    "Lists the book's chapters in reading order, each with its chapter number and how many passages it holds, up to the " +
    'chapter the reader has reached. Use it to see how the book is organised before reading a chapter with read_passage, ' +
    'or to answer questions about its structure. When the conversation has several books, pass `book`.';
  readonly inputSchema = {
    type: 'object' as const,
    properties: {
      book: BOOK_PARAMETER,
    },
  };

  async run(input: unknown, ctx: ToolContext): Promise<ToolOutput> {
    const parsed = parseInput(input);
    if (typeof parsed === 'string') return { isError: true, content: parsed };
    const found = await bookToRead(this.books, parsed.book, ctx);
    if ('refusal' in found) return { isError: true, content: found.refusal };
    const { book } = found;
    const chapters = await this.passages.chaptersOf(book.id, ctx.readingPosition);
    const hidden = book.chapters.filter((c) => ctx.readingPosition !== null && c.index > ctx.readingPosition).length;
    const lines = chapters.map(
      (c) => `- chapter ${c.index}: ${c.title} (${c.passages} passage${c.passages === 1 ? '' : 's'})`,
    );
    const more = hidden ? `\n\n${hidden} more chapter${hidden === 1 ? '' : 's'} the reader has not reached.` : '';
    return {
      content: `"${book.title}" (book ${book.id})${readingScope(ctx.readingPosition)}:\n\n${lines.join('\n')}${more}`,
    };
  }
}

function parseInput(input: unknown): { book?: string } | string {
  if (input === undefined || input === null) return {};
  if (typeof input !== 'object' || Array.isArray(input)) return 'input must be an object {"book"?: string}';
  const { book, ...rest } = input as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) return `unknown input field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`;
  if (book !== undefined && typeof book !== 'string') return 'book must be a book id (a string)';
  return book === undefined ? {} : { book };
}
