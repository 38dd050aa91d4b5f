import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import {
  conversationIdOf,
  conversationStreamId,
  ErasureSubject,
  turnKey,
  UserMessagePosted,
} from '@parley/conversation';
import { EventLogQueries, StoredEvent, streamHasEventSql } from '@parley/event-store';
import type { ToolCall } from './read-model.writes';

/** A UserMessagePosted as its Idempotency-Key finds it again. */
export type StoredPost = Pick<StoredEvent<UserMessagePosted>, 'version' | 'position' | 'data'>;

/** A posted turn the log shows no ending for. */
export interface UnendedTurn {
  conversationId: string;
  turnId: string;
}

/** The types that end a conversation's stream, as the partial index events_conversation_ended names them. */
const ENDED = ['ConversationDeleted', 'ConversationErased'];
/** A turn's endings, as the partial index events_turn_endings names them. */
const TURN_ENDINGS = ['AssistantReplied', 'TurnFailed', 'TurnCancelled'];

/**
 * A condition true when the stream named by `streamIdSql` (an SQL expression) is erased (by that
 * subject's erasure, when given), for a statement that writes elsewhere (the usage ledger, the
 * fold snapshots). The ended streams' partial index is named first, so the planner uses it.
 */
export const erasedStreamSql = (
  streamIdSql: string,
  { alias = 'x', bySubject }: { alias?: string; bySubject?: ErasureSubject } = {},
): string =>
  streamHasEventSql(
    streamIdSql,
    { indexed: ENDED, types: ['ConversationErased'], ...(bySubject ? { field: 'subject', equals: bySubject } : {}) },
    alias,
  );

/**
 * Questions about conversations that must be answered from the log itself, not from the read
 * models (which lag), asked through the event store's EventLogQueries with the conversation
 * events' types and fields.
 */
@Injectable()
export class ConversationLogQueries {
  private readonly log: EventLogQueries;

  constructor(@Inject(Pool) db: Pick<Pool, 'query'>) {
    this.log = new EventLogQueries(db); // on the same pool or transaction
  }

  /**
   * The owner's conversations that ever had the book as a source: at their start (`bookId`,
   * `bookIds`) or by a later SourcesChanged, dropped since or not.
   */
  async conversationsAbout(ownerId: string, bookId: string): Promise<string[]> {
    const streams = await this.log.streamsNaming(
      bookId,
      {
        inArray: { types: ['ConversationStarted', 'SourcesChanged'], field: 'bookIds' },
        inField: { type: 'ConversationStarted', field: 'bookId' },
      },
      { type: 'ConversationStarted', field: 'ownerId', startedBy: ownerId },
    );
    return streams.flatMap((s) => conversationIdOf(s) ?? []);
  }

  /**
   * The tool results and answers that cite any of these passages, in any conversation (a
   * withdrawn catalogue book's): each with its data, for its redaction. A scan of the two types,
   * for a rare request.
   */
  async eventsCitingPassages(
    chunkIds: string[],
  ): Promise<
    Array<{ eventId: string; streamId: string; type: 'ToolResultRecorded' | 'AssistantReplied'; data: unknown }>
  > {
    const events = await this.log.eventsWithArrayElement(
      [
        { type: 'ToolResultRecorded', field: 'chunks' },
        { type: 'AssistantReplied', field: 'citations' },
      ],
      'chunkId',
      chunkIds,
    );
    return events.map((e) => ({
      eventId: e.eventId,
      streamId: e.streamId,
      type: e.type as 'ToolResultRecorded' | 'AssistantReplied',
      data: e.data,
    }));
  }

  /** Every conversation the owner started. */
  async conversationsOf(ownerId: string): Promise<string[]> {
    const streams = await this.log.streamsWith('ConversationStarted', 'ownerId', ownerId);
    return streams.flatMap((s) => conversationIdOf(s) ?? []);
  }

  /**
   * Forks not erased of conversations erased with a book or an account (`sources`, or any such
   * erasure within `lookback`): made while that erasure ran, from a history it erased. Every
   * older fork was erased with them, as one of the owner's or the book's conversations.
   */
  async forksOfErased(
    scope: { sources: string[] } | { lookback: string },
  ): Promise<Array<{ conversationId: string; ownerId: string; subject: ErasureSubject }>> {
    const forks = await this.log.derivedFromMarked({
      origin: {
        match: { indexed: ENDED, types: ['ConversationErased'] },
        field: 'subject',
        values: ['book', 'account'],
      },
      derived: {
        type: 'ConversationStarted',
        path: ['forkedFrom', 'conversationId'],
        prefix: conversationStreamId(''),
        field: 'ownerId',
      },
      streams: 'sources' in scope ? scope.sources.map(conversationStreamId) : null,
      lookback: 'lookback' in scope ? scope.lookback : null,
    });
    return forks.flatMap((f) => {
      const conversationId = conversationIdOf(f.streamId);
      return conversationId
        ? [{ conversationId, ownerId: f.derivedField, subject: f.originField as ErasureSubject }]
        : [];
    });
  }

  /** Conversations a release before erasure deleted and nothing has erased yet. */
  async deletedNotErased(limit: number): Promise<string[]> {
    const streams = await this.log.streamsWithType('ConversationDeleted', limit);
    return streams.flatMap((s) => conversationIdOf(s) ?? []);
  }

  /** Batches started within `lookback` (a Postgres interval) that have no BatchCompleted, in conversations not deleted. */
  async unfinishedBatches(lookback: string): Promise<Array<{ conversationId: string; batchId: string }>> {
    const batches = await this.log.unanswered({
      type: 'BatchStarted',
      key: 'batchId',
      answeredBy: ['BatchCompleted'],
      unlessStreamHas: 'ConversationDeleted',
      lookback,
    });
    return batches.flatMap((b) => {
      const conversationId = conversationIdOf(b.streamId);
      return conversationId ? [{ conversationId, batchId: b.key }] : [];
    });
  }

  /** How the turns ended, read from the log: the ending event of each (none while it runs). */
  async turnEndings(
    turns: Array<{ conversationId: string; turnId: string }>,
  ): Promise<Map<string, { type: string; data: Record<string, unknown> }>> {
    const endings = await this.log.eventsByKey<{ turnId: string }>(
      TURN_ENDINGS,
      'turnId',
      turns.map((t) => ({ streamId: conversationStreamId(t.conversationId), key: t.turnId })),
    );
    return new Map(
      endings.map((e) => [`${conversationIdOf(e.streamId)}/${e.data.turnId}`, { type: e.type, data: e.data }]),
    );
  }

  /** The user's post stored under this event id in the conversation, if there is one. */
  async findPost(userId: string, conversationId: string, eventId: string): Promise<StoredPost | undefined> {
    const found = await this.log.event(conversationStreamId(conversationId), eventId);
    if (!found || found.metadata?.userId !== userId) return undefined;
    return { data: found.data as UserMessagePosted['data'], version: found.version, position: found.position };
  }

  /**
   * Turns posted within `lookback` (a Postgres interval) that have no ending in the log, in
   * conversations not deleted, in log order.
   */
  async unendedTurns(lookback: string): Promise<UnendedTurn[]> {
    const turns = await this.log.unanswered({
      type: 'UserMessagePosted',
      key: 'turnId',
      answeredBy: TURN_ENDINGS,
      unlessStreamHas: 'ConversationDeleted',
      lookback,
    });
    return turns.flatMap((t) => {
      const conversationId = conversationIdOf(t.streamId);
      return conversationId ? [{ conversationId, turnId: t.key }] : [];
    });
  }

  /** Of these streams, the ones the log shows deleted or erased. */
  streamsWithDeletion(streamIds: string[]): Promise<Set<string>> {
    return this.log.streamsHaving(streamIds, { types: ENDED });
  }

  /** Each turn's ToolInvoked calls in log order, keyed `streamId/turnId`. */
  async toolCallsOfTurns(turns: Array<{ streamId: string; turnId: string }>): Promise<Map<string, ToolCall[]>> {
    const invoked = await this.log.eventsByKey<ToolCall & { turnId: string }>(
      ['ToolInvoked'],
      'turnId',
      turns.map((t) => ({ streamId: t.streamId, key: t.turnId })),
    );
    const calls = new Map<string, ToolCall[]>();
    for (const { streamId, data: call } of invoked) {
      const key = turnKey(streamId, call.turnId);
      const list = calls.get(key) ?? [];
      list.push({ toolUseId: call.toolUseId, name: call.name, input: call.input });
      calls.set(key, list);
    }
    return calls;
  }
}
