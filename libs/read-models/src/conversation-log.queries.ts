import { Pool } from 'pg';
import {
  conversationIdOf,
  conversationStreamId,
  ErasureSubject,
  turnKey,
  UserMessagePosted,
} from '@parley/conversation';
import { StoredEvent } from '@parley/event-store';
import type { ToolCall } from './read-model.writes';

/** A UserMessagePosted as its Idempotency-Key finds it again. */
export type StoredPost = Pick<StoredEvent<UserMessagePosted>, 'version' | 'position' | 'data'>;

/** A posted turn the log shows no ending for. */
export interface UnendedTurn {
  conversationId: string;
  turnId: string;
}

/**
 * Questions about conversations that must be answered from the log itself, not from the read
 * models (which lag): the only SQL on the events table outside the event store, which knows
 * nothing of conversations (see erasedStreamSql for the statements elsewhere that test for it).
 */
/**
 * A condition true when the stream named by `streamIdSql` (an SQL expression) is erased (by that
 * subject's erasure, when given), for a
 * statement that writes elsewhere (the usage ledger, the fold snapshots). The first condition is
 * the partial index's own, so the planner uses it.
 */
export const erasedStreamSql = (
  streamIdSql: string,
  { alias = 'x', bySubject }: { alias?: string; bySubject?: ErasureSubject } = {},
): string =>
  `EXISTS (SELECT 1 FROM events ${alias}
            WHERE ${alias}.stream_id = ${streamIdSql} AND ${alias}.type IN ('ConversationDeleted', 'ConversationErased')
              AND ${alias}.type = 'ConversationErased'${bySubject ? ` AND ${alias}.data ->> 'subject' = '${bySubject}'` : ''})`;

export class ConversationLogQueries {
  constructor(private readonly pool: Pick<Pool, 'query'>) {}

  /**
   * The owner's conversations that ever had the book as a source: at their start (`bookId`,
   * `bookIds`) or by a later SourcesChanged, dropped since or not.
   */
  async conversationsAbout(ownerId: string, bookId: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ stream_id: string }>(
      `SELECT DISTINCT s.stream_id FROM events s
        WHERE ((s.type IN ('ConversationStarted', 'SourcesChanged') AND s.data -> 'bookIds' ? $1)
               OR (s.type = 'ConversationStarted' AND s.data ->> 'bookId' = $1))
          AND EXISTS (SELECT 1 FROM events o
                       WHERE o.stream_id = s.stream_id AND o.type = 'ConversationStarted' AND o.data ->> 'ownerId' = $2)`,
      [bookId, ownerId],
    );
    return rows.flatMap((r) => conversationIdOf(r.stream_id) ?? []);
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
    if (chunkIds.length === 0) return [];
    const { rows } = await this.pool.query<{
      event_id: string;
      stream_id: string;
      type: 'ToolResultRecorded' | 'AssistantReplied';
      data: unknown;
    }>(
      `SELECT e.event_id, e.stream_id, e.type, e.data FROM events e
        WHERE e.type IN ('ToolResultRecorded', 'AssistantReplied')
          AND EXISTS (SELECT 1 FROM jsonb_array_elements(
                        CASE e.type WHEN 'ToolResultRecorded' THEN coalesce(e.data -> 'chunks', '[]')
                                    ELSE coalesce(e.data -> 'citations', '[]') END) c
                       WHERE c ->> 'chunkId' = ANY($1::text[]))`,
      [chunkIds],
    );
    return rows.map((r) => ({ eventId: r.event_id, streamId: r.stream_id, type: r.type, data: r.data }));
  }

  /** Every conversation the owner started. */
  async conversationsOf(ownerId: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ stream_id: string }>(
      `SELECT stream_id FROM events WHERE type = 'ConversationStarted' AND data ->> 'ownerId' = $1`,
      [ownerId],
    );
    return rows.flatMap((r) => conversationIdOf(r.stream_id) ?? []);
  }

  /**
   * Forks not erased of conversations erased with a book or an account (`sources`, or any such
   * erasure within `lookback`): made while that erasure ran, from a history it erased. Every
   * older fork was erased with them, as one of the owner's or the book's conversations.
   */
  async forksOfErased(
    scope: { sources: string[] } | { lookback: string },
  ): Promise<Array<{ conversationId: string; ownerId: string; subject: ErasureSubject }>> {
    const sources = 'sources' in scope ? scope.sources.map(conversationStreamId) : null;
    const { rows } = await this.pool.query<{ stream_id: string; owner_id: string; subject: ErasureSubject }>(
      `SELECT f.stream_id, f.data ->> 'ownerId' AS owner_id, t.data ->> 'subject' AS subject
         FROM events t
         JOIN events f ON f.type = 'ConversationStarted'
                      AND f.data -> 'forkedFrom' ->> 'conversationId' = substr(t.stream_id, length('conversation-') + 1)
        WHERE t.type IN ('ConversationDeleted', 'ConversationErased') AND t.type = 'ConversationErased'
          AND t.data ->> 'subject' IN ('book', 'account')
          AND ($1::text[] IS NULL OR t.stream_id = ANY($1))
          AND ($2::interval IS NULL OR t.occurred_at > now() - $2::interval)
          AND NOT EXISTS (SELECT 1 FROM events g
                           WHERE g.stream_id = f.stream_id AND g.type IN ('ConversationDeleted', 'ConversationErased')
                             AND g.type = 'ConversationErased')`,
      [sources, 'lookback' in scope ? scope.lookback : null],
    );
    return rows.flatMap((r) => {
      const conversationId = conversationIdOf(r.stream_id);
      return conversationId ? [{ conversationId, ownerId: r.owner_id, subject: r.subject }] : [];
    });
  }

  /** Conversations a release before erasure deleted and nothing has erased yet. */
  async deletedNotErased(limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ stream_id: string }>(
      `SELECT stream_id FROM events WHERE type = 'ConversationDeleted' ORDER BY position LIMIT $1`,
      [limit],
    );
    return rows.flatMap((r) => conversationIdOf(r.stream_id) ?? []);
  }

  /** Batches started within `lookback` (a Postgres interval) that have no BatchCompleted, in conversations not deleted. */
  async unfinishedBatches(lookback: string): Promise<Array<{ conversationId: string; batchId: string }>> {
    const { rows } = await this.pool.query<{ stream_id: string; batch_id: string }>(
      `SELECT s.stream_id, s.data->>'batchId' AS batch_id FROM events s
        WHERE s.type = 'BatchStarted' AND s.occurred_at > now() - $1::interval
          AND NOT EXISTS (SELECT 1 FROM events c WHERE c.stream_id = s.stream_id AND c.type = 'BatchCompleted'
                            AND c.data->>'batchId' = s.data->>'batchId')
          AND NOT EXISTS (SELECT 1 FROM events d WHERE d.stream_id = s.stream_id AND d.type = 'ConversationDeleted')`,
      [lookback],
    );
    return rows.flatMap((r) => {
      const conversationId = conversationIdOf(r.stream_id);
      return conversationId ? [{ conversationId, batchId: r.batch_id }] : [];
    });
  }

  /** How the turns ended, read from the log: the ending event of each (none while it runs). */
  async turnEndings(
    turns: Array<{ conversationId: string; turnId: string }>,
  ): Promise<Map<string, { type: string; data: Record<string, unknown> }>> {
    if (turns.length === 0) return new Map();
    const { rows } = await this.pool.query<{ stream_id: string; type: string; data: Record<string, unknown> }>(
      `SELECT e.stream_id, e.type, parley_event_data(e.type, e.data) AS data FROM events e
         JOIN unnest($1::text[], $2::text[]) AS t(stream_id, turn_id)
           ON e.stream_id = t.stream_id AND e.data->>'turnId' = t.turn_id
        WHERE e.type IN ('AssistantReplied', 'TurnFailed', 'TurnCancelled')`,
      [turns.map((t) => conversationStreamId(t.conversationId)), turns.map((t) => t.turnId)],
    );
    return new Map(rows.map((r) => [`${conversationIdOf(r.stream_id)}/${r.data.turnId as string}`, r]));
  }

  /** The user's post stored under this event id in the conversation, if there is one. */
  async findPost(userId: string, conversationId: string, eventId: string): Promise<StoredPost | undefined> {
    const { rows } = await this.pool.query<StoredPost>(
      `SELECT data, version, position::text AS position FROM events
        WHERE event_id = $1 AND stream_id = $2 AND metadata->>'userId' = $3`,
      [eventId, conversationStreamId(conversationId), userId],
    );
    return rows[0];
  }

  /**
   * Turns posted within `lookback` (a Postgres interval) that have no ending in the log, in
   * conversations not deleted, in log order.
   */
  async unendedTurns(lookback: string): Promise<UnendedTurn[]> {
    const { rows } = await this.pool.query<{ stream_id: string; turn_id: string }>(
      `SELECT p.stream_id, p.data->>'turnId' AS turn_id
         FROM events p
        WHERE p.type = 'UserMessagePosted' AND p.occurred_at > now() - $1::interval
          AND NOT EXISTS (SELECT 1 FROM events e
                           WHERE e.stream_id = p.stream_id AND e.data->>'turnId' = p.data->>'turnId'
                             AND e.type IN ('AssistantReplied', 'TurnFailed', 'TurnCancelled'))
          AND NOT EXISTS (SELECT 1 FROM events d WHERE d.stream_id = p.stream_id AND d.type = 'ConversationDeleted')
        ORDER BY p.position`,
      [lookback],
    );
    return rows.flatMap((r) => {
      const conversationId = conversationIdOf(r.stream_id);
      return conversationId ? [{ conversationId, turnId: r.turn_id }] : [];
    });
  }

  /** Of these streams, the ones the log shows deleted or erased. */
  async streamsWithDeletion(streamIds: string[]): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ stream_id: string }>(
      `SELECT DISTINCT stream_id FROM events
        WHERE stream_id = ANY($1::text[]) AND type IN ('ConversationDeleted', 'ConversationErased')`,
      [streamIds],
    );
    return new Set(rows.map((r) => r.stream_id));
  }

  /** Each turn's ToolInvoked calls in log order, keyed `streamId/turnId`. */
  async toolCallsOfTurns(turns: Array<{ streamId: string; turnId: string }>): Promise<Map<string, ToolCall[]>> {
    const { rows } = await this.pool.query<{ stream_id: string; data: ToolCall & { turnId: string } }>(
      `SELECT e.stream_id, e.data FROM events e
         JOIN (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS t(stream_id, turn_id)) t
           ON e.stream_id = t.stream_id AND e.data->>'turnId' = t.turn_id
        WHERE e.type = 'ToolInvoked'
        ORDER BY e.stream_id, e.version`,
      [turns.map((t) => t.streamId), turns.map((t) => t.turnId)],
    );
    const calls = new Map<string, ToolCall[]>();
    for (const { stream_id, data } of rows) {
      const key = turnKey(stream_id, data.turnId);
      const list = calls.get(key) ?? [];
      list.push({ toolUseId: data.toolUseId, name: data.name, input: data.input });
      calls.set(key, list);
    }
    return calls;
  }
}
