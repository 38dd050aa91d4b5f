import { Injectable } from '@nestjs/common';
import { assertVisible, ConversationEvent, conversationStreamId, fold } from '@parley/conversation';
import { EventStore } from '@parley/event-store';
import { ReadReplica } from '@parley/platform';
import {
  ConversationLogQueries,
  ConversationSummary,
  InvalidCursorError,
  MessageView,
  Page,
  ReadModelQueries,
} from '@parley/read-models';
import { invalid, problem } from '../http/problem.exception';
import { UsageReport, UsageService } from '../usage/usage.service';
import { ApiConversationFolds } from './api-conversation-folds';
import { batchView, BatchView } from './batch-view';
import { ConversationView, toView } from './conversation-view';
import { EventEnvelope, toEnvelope } from './event-envelope';

/**
 * What a reader reads: the list of their conversations, and a conversation's state (now or at a
 * version), batches, messages, event log and usage. A read of one conversation answers 404 for
 * one that is not the caller's, or is erased.
 */
@Injectable()
export class ConversationReads {
  constructor(
    private readonly folds: ApiConversationFolds,
    private readonly log: ConversationLogQueries,
    private readonly queries: ReadModelQueries,
    private readonly store: EventStore,
    private readonly replica: ReadReplica,
    private readonly usageReports: UsageService,
  ) {}

  /** 404 unless the conversation is the reader's and neither deleted nor erased. */
  async assertVisible(userId: string, conversationId: string): Promise<void> {
    assertVisible((await this.folds.load(conversationId)).state, userId);
  }

  /** The conversation's state, now or at a version (a deleted conversation is gone at every version). */
  async view(userId: string, conversationId: string, version?: number): Promise<ConversationView> {
    const folded = await this.folds.load(conversationId);
    assertVisible(folded.state, userId);
    if (version === undefined) return toView(conversationId, folded);
    if (folded.state.version < version)
      throw problem('version_not_found', `the conversation has no version ${version}`);
    const events = await this.store.readStream<ConversationEvent>(conversationStreamId(conversationId), {
      upTo: version,
    });
    return toView(conversationId, {
      state: fold(events),
      createdAt: events[0]?.occurredAt,
      lastActivityAt: events.at(-1)?.occurredAt,
    });
  }

  /** A batch as it stands: each prompt's answer (from the log) and the batch's figures. */
  async batch(userId: string, conversationId: string, batchId: string): Promise<BatchView> {
    const { state } = await this.folds.load(conversationId);
    assertVisible(state, userId);
    const batch = state.batches[batchId];
    if (!batch) throw problem('batch_not_found', `the conversation has no batch ${batchId}`);
    return batchView(batchId, batch, await this.log.turnEndings(batch.items));
  }

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
    await this.assertVisible(userId, conversationId);
    return withCursor(() => this.queries.listMessages(conversationId, { limit: q.limit ?? 100, cursor: q.cursor }));
  }

  /** The stream's events with version > after, as envelopes. */
  async events(
    userId: string,
    conversationId: string,
    q: { after?: number; limit?: number },
  ): Promise<Page<EventEnvelope>> {
    await this.assertVisible(userId, conversationId);
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
    await this.assertVisible(userId, conversationId);
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
