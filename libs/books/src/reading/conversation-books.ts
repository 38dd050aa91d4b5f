import { Injectable } from '@nestjs/common';
import type { AgentTool, ToolContext, ToolOutput } from '@parley/agent';
import { BookNotFoundError } from '../book.errors';
import { Book } from '../book.types';
import { BookQueries } from '../book-queries';
import { turnReader } from '../catalogue/book-reader';
import { PassagesRepository } from '../search/passages.repository';

/** The `book` parameter of a reading tool. */
export const BOOK_PARAMETER = {
  type: 'string',
  description: "the id of one of the conversation's books (needed when it has several)",
};

/** A tool that reads the conversation's books in place: offered when it has one. (Injectable: its subclasses inherit its constructor's injection.) */
@Injectable()
export abstract class ReadingTool implements AgentTool {
  abstract readonly name: string;
  abstract readonly description: string;
  abstract readonly inputSchema: AgentTool['inputSchema'];

  constructor(
    protected readonly books: BookQueries,
    protected readonly passages: PassagesRepository,
  ) {}

  availableFor(ctx: ToolContext): boolean {
    return ctx.bookIds.length > 0;
  }

  abstract run(input: unknown, ctx: ToolContext): Promise<ToolOutput>;
}

/**
 * The book a reading tool's call is about: the one `book` names among the conversation's, or the
 * only one; and whether this turn's reader may still read it. What the model reads when not.
 */
export async function bookToRead(
  books: BookQueries,
  requested: string | undefined,
  ctx: ToolContext,
): Promise<{ book: Book } | { refusal: string }> {
  if (ctx.bookIds.length === 0) return { refusal: 'this conversation has no book' };
  if (requested !== undefined && !ctx.bookIds.includes(requested))
    return { refusal: `book ${requested} is not one of this conversation's books: ${ctx.bookIds.join(', ')}` };
  if (requested === undefined && ctx.bookIds.length > 1)
    return { refusal: `this conversation has several books: pass \`book\`, one of ${ctx.bookIds.join(', ')}` };
  const id = requested ?? ctx.bookIds[0];
  try {
    const book = await books.get(turnReader(ctx), id);
    if (book.status !== 'ready') return { refusal: `book ${id} is not ready to read yet` };
    return { book };
  } catch (e) {
    if (!(e instanceof BookNotFoundError)) throw e;
    return {
      refusal:
        `book ${id} is no longer available to this reader (deleted, withdrawn from the catalogue by its publisher, ` +
        'or of a catalogue they no longer read). Tell the reader so plainly.',
    };
  }
}

/** What the reading position lets the model see, said to it. */
export const readingScope = (readingPosition: number | null): string =>
  readingPosition === null ? '' : ` (the reader has read up to chapter ${readingPosition}; nothing after it is shown)`;
