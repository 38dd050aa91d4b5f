import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { invalid } from '../http/problem.exception';
import { RateLimits } from '../rate-limits/rate-limits';
import { ConversationReads } from './conversation-reads.service';
import { ConversationView } from './conversation-view';
import { ConversationWrites } from './conversation-writes';
import { ReadableBooks } from './readable-books';

/** POST /conversations (and MCP ask on a book): StartConversation with the reader's ready books, within their limit. */
@Injectable()
export class ConversationStarting {
  constructor(
    private readonly writes: ConversationWrites,
    private readonly books: ReadableBooks,
    private readonly reads: ConversationReads,
    private readonly rateLimits: RateLimits,
  ) {}

  async start(
    userId: string,
    input: { bookId?: string; bookIds?: string[]; title?: string; readingPosition?: number | null },
    /** the caller's token's parley_tenant, whose catalogue's books they may use */
    tenant?: string,
    /** the new conversation's id: a caller that may start the same conversation twice derives it (MCP ask) */
    id: string = randomUUID(),
  ): Promise<ConversationView> {
    if (input.bookId && input.bookIds && (input.bookIds.length !== 1 || input.bookIds[0] !== input.bookId)) {
      throw invalid('bookIds', 'give bookId (one book) or bookIds, not both');
    }
    const books = await this.books.ready(userId, tenant, input.bookIds ?? (input.bookId ? [input.bookId] : []));
    await this.rateLimits.consume('conversations', userId);
    await this.writes.execute(id, {
      type: 'StartConversation',
      userId,
      bookIds: books.map((b) => b.id),
      title: input.title ?? null,
      readingPosition: input.readingPosition ?? null,
    });
    return this.reads.view(userId, id);
  }
}
