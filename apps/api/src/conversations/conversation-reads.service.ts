import { Injectable } from '@nestjs/common';
import { conversationStreamId } from '@parley/conversation';
import { EventStore } from '@parley/event-store';
import { ReadReplica } from '@parley/platform';
import { ConversationSummary, InvalidCursorError, MessageView, Page, ReadModelQueries } from '@parley/read-models';
import { invalid } from '../http/problem.exception';
import { UsageReport, UsageService } from '../usage/usage.service';
import { ConversationsService } from './conversations.service';
import { EventEnvelope, toEnvelope } from './event-envelope';

/**
 * What a reader reads besides a conversation's state (ConversationsService.view): the list of
 * their conversations, and a conversation's messages, event log and usage. A read of one
 * conversation answers 404 for one that is not the caller's, or is erased.
 */
@Injectable()
export class ConversationReads {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly queries: ReadModelQueries,
    private readonly store: EventStore,
    private readonly replica: ReadReplica,
    private readonly usageReports: UsageService,
  ) {}

  /** Newest activity first. */
  list(userId: string, q: { bookId?: string; limit?: number; cursor?: string }): Promise<Page<ConversationSummary>> {
    return withCursor(() =>
      this.queries.listConversations(userId, { bookId: q.bookId, limit: q.limit ?? 20, cursor: q.cursor }),
    );
  }

  /** Oldest first. */
  async messages(
    userId: string,
    conversationId: string,
    q: { limit?: number; cursor?: string },
  ): Promise<Page<MessageView>> {
    await this.conversations.view(userId, conversationId);
    return withCursor(() => this.queries.listMessages(conversationId, { limit: q.limit ?? 100, cursor: q.cursor }));
  }

  /** The stream's events with version > after, as envelopes. */
  async events(
    userId: string,
    conversationId: string,
    q: { after?: number; limit?: number },
  ): Promise<Page<EventEnvelope>> {
    await this.conversations.view(userId, conversationId);
    const limit = q.limit ?? 1000;
    // the replica serves the page once it has replayed every write committed before this request
    const events = await this.store.readStream(
      conversationStreamId(conversationId),
      { after: q.after ?? 0, limit: limit + 1 },
      await this.replica.currentPool(),
    );
    const page = events.slice(0, limit);
    return {
      items: page.map(toEnvelope),
      nextCursor: events.length > limit ? String(page[page.length - 1].version) : null,
    };
  }

  async usage(userId: string, conversationId: string): Promise<UsageReport> {
    await this.conversations.view(userId, conversationId);
    return this.usageReports.ofConversation(userId, conversationId);
  }
}

/** A cursor the client made up, or changed, is its mistake (400), not the server's. */
async function withCursor<T>(query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (e) {
    if (e instanceof InvalidCursorError) {
      throw invalid('cursor', 'cursor is not valid: pass the nextCursor of a previous page unchanged');
    }
    throw e;
  }
}
