import { Pool } from 'pg';
import { Usage } from '@parley/conversation';
import { decodeCursor, encodeCursor, isInstantIdCursor } from './cursor';

export interface ConversationSummary {
  id: string;
  bookId: string | null;
  bookIds: string[];
  title: string | null;
  readingPosition: number | null;
  forkedFrom: { conversationId: string; version: number } | null;
  version: number;
  messageCount: number;
  createdAt: string;
  lastActivityAt: string;
}

export interface MessageView {
  id: string;
  conversationId: string;
  version: number;
  role: 'user' | 'assistant' | 'tool_result';
  turnId: string;
  content: string;
  selectedText: string | null;
  toolInvocations: Array<{ toolUseId: string; name: string; input: unknown }>;
  citations: unknown[];
  model: string | null;
  usage: unknown;
  costUsd: number | null;
  isError: boolean | null;
  createdAt: string;
}

/** Usage summed over a set of usage records, for one model or all. */
export type UsageFigures = { turns: number; toolCalls: number; failures: number } & Usage & {
    /** the recorded price of answers and summaries */
    costUsd: number;
  };

/**
 * Per model (null: turns that ended without a model's answer). `unpriced`: tokens of turns that
 * did not reply and of calls stopped before their end, at list price; `unpricedBatched`: from
 * calls through the Message Batches API (half the price).
 */
export interface UsageByModel extends UsageFigures {
  model: string | null;
  unpriced: Usage;
  unpricedBatched: Usage;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

// Cursors come back from clients: anything Postgres would refuse as a timestamptz, uuid or
// integer must be refused here, as an invalid cursor (400), not reach the query (500).
const PG_INT_MAX = 2 ** 31 - 1;
const isVersionCursor = (v: unknown): v is number =>
  Number.isInteger(v) && (v as number) >= 0 && (v as number) <= PG_INT_MAX;

/** Where a query runs: a pool, or a choice made per query (a replica once it has caught up, else the primary). */
export type ReadSource = () => Promise<Pick<Pool, 'query'>>;

/** Queries over the read models; every one is scoped to its owner. */
export class ReadModelQueries {
  constructor(private readonly source: ReadSource) {}

  /** Newest activity first; the cursor is the last row's (last_activity_at, id). */
  async listConversations(
    ownerId: string,
    opts: { bookId?: string; limit: number; cursor?: string },
  ): Promise<Page<ConversationSummary>> {
    const after = opts.cursor ? decodeCursor(opts.cursor, isInstantIdCursor) : null;
    const db = await this.source();
    const { rows } = await db.query(
      `SELECT id, book_id, book_ids, title, reading_position, forked_from, version, message_count, created_at,
              to_char(last_activity_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS activity_key, last_activity_at
         FROM conversations
        WHERE owner_id = $1
          AND ($2::uuid IS NULL OR book_ids @> ARRAY[$2::uuid])
          AND ($3::timestamptz IS NULL OR (last_activity_at, id) < ($3::timestamptz, $4::uuid))
        ORDER BY last_activity_at DESC, id DESC
        LIMIT $5`,
      [ownerId, opts.bookId ?? null, after?.[0] ?? null, after?.[1] ?? null, opts.limit + 1],
    );
    const page = rows.slice(0, opts.limit);
    const last = page[page.length - 1];
    return {
      items: page.map((r) => ({
        id: r.id,
        bookId: r.book_id,
        bookIds: r.book_ids,
        title: r.title,
        readingPosition: r.reading_position,
        forkedFrom: r.forked_from,
        version: r.version,
        messageCount: r.message_count,
        createdAt: r.created_at.toISOString(),
        lastActivityAt: r.last_activity_at.toISOString(),
      })),
      nextCursor: rows.length > opts.limit ? encodeCursor([last.activity_key, last.id]) : null,
    };
  }

  /**
   * The owner's usage by model: one conversation's, or within [from, to) of the lines' times.
   * Each line counts at its own time: a tool call's line is its model call, and an answer's line
   * is its turn's last call (AssistantReplied's totals less the turn's tool-call lines). A line
   * recorded before calls carried their price (cost_usd null) is `unpriced`, to be priced at list
   * price: a stopped call always, a tool call when its turn did not reply (its answer's total
   * holds it otherwise). An erased account's lines of this month count by its pseudonym.
   */
  async usage(ownerId: string, scope: { conversationId?: string; from?: Date; to?: Date }): Promise<UsageByModel[]> {
    const db = await this.source();
    const { rows } = await db.query(USAGE_BY_MODEL_SQL, [
      ownerId,
      scope.conversationId ?? null,
      scope.from ?? null,
      scope.to ?? null,
    ]);
    return rows.map(usageByModelOf);
  }

  /** Oldest first, paged by stream version. */
  async listMessages(conversationId: string, opts: { limit: number; cursor?: string }): Promise<Page<MessageView>> {
    const after = opts.cursor ? decodeCursor(opts.cursor, isVersionCursor) : 0;
    const db = await this.source();
    const { rows } = await db.query(
      `SELECT * FROM messages WHERE conversation_id = $1 AND version > $2 ORDER BY version LIMIT $3`,
      [conversationId, after, opts.limit + 1],
    );
    const page = rows.slice(0, opts.limit);
    return {
      items: page.map((r) => ({
        id: r.id,
        conversationId: r.conversation_id,
        version: r.version,
        role: r.role,
        turnId: r.turn_id,
        content: r.content,
        selectedText: r.selected_text,
        toolInvocations: r.tool_invocations ?? [],
        citations: r.citations ?? [],
        model: r.model,
        usage: r.usage,
        costUsd: r.cost_usd,
        isError: r.is_error,
        createdAt: r.created_at.toISOString(),
      })),
      nextCursor: rows.length > opts.limit ? encodeCursor(page[page.length - 1].version) : null,
    };
  }
}

/**
 * The usage query ($1 owner, $2 conversation or null, $3 from or null, $4 to or null): one row per
 * model. Shared with the budget's reservations, which read it in the same statement as the money
 * set aside (one snapshot: a call settled meanwhile is counted once).
 */
export const USAGE_BY_MODEL_SQL = usageSql(`
     SELECT u.*, NULL::text AS key FROM usage_records u
      WHERE (u.owner_id = $1 OR u.owner_key = ledger_pseudonym($1))
        AND ($2::uuid IS NULL OR u.conversation_id = $2)
        AND ($3::timestamptz IS NULL OR u.at >= $3)
        AND ($4::timestamptz IS NULL OR u.at < $4)`);

/**
 * The usage query over any set of the ledger's lines (`lines`: a SELECT of usage_records' columns
 * and a `key` to group by besides the model): every report, a reader's or a tenant's, counts its
 * lines by this one rule.
 */
export function usageSql(lines: string): string {
  return `WITH r AS (${lines}
   ), own AS (
     SELECT r.key, r.kind, r.model, r.batched, r.cost_usd IS NULL AND (r.kind = 'stopped_call' OR (r.kind = 'tool_call' AND NOT EXISTS (
              SELECT 1 FROM usage_records a
               WHERE a.conversation_id = r.conversation_id AND a.turn_id = r.turn_id AND a.kind = 'answer'
            ))) AS unpriced,
            r.cost_usd IS NOT NULL OR r.kind IN ('answer', 'summary') AS priced,
            r.input_tokens - coalesce(e.input, 0) AS input_tokens,
            r.output_tokens - coalesce(e.output, 0) AS output_tokens,
            r.cache_read_input_tokens - coalesce(e.cache_read, 0) AS cache_read_input_tokens,
            r.cache_creation_input_tokens - coalesce(e.cache_creation, 0) AS cache_creation_input_tokens,
            greatest(coalesce(r.cost_usd, 0) - coalesce(e.cost, 0), 0) AS cost_usd
       FROM r
       LEFT JOIN LATERAL (
         SELECT sum(t.input_tokens) AS input, sum(t.output_tokens) AS output,
                sum(t.cache_read_input_tokens) AS cache_read, sum(t.cache_creation_input_tokens) AS cache_creation,
                sum(t.cost_usd) AS cost
           FROM usage_records t
          WHERE r.kind = 'answer' AND t.conversation_id = r.conversation_id AND t.turn_id = r.turn_id
            AND t.kind = 'tool_call' AND t.cost_usd IS NOT NULL
       ) e ON true
   )
   SELECT key, model,
          count(*) FILTER (WHERE kind IN ('answer', 'failure', 'cancel'))::int AS turns,
          count(*) FILTER (WHERE kind = 'tool_call')::int AS tool_calls,
          count(*) FILTER (WHERE kind = 'failure')::int AS failures,
          coalesce(sum(input_tokens) FILTER (WHERE priced OR unpriced), 0)::float8 AS input,
          coalesce(sum(output_tokens) FILTER (WHERE priced OR unpriced), 0)::float8 AS output,
          coalesce(sum(cache_read_input_tokens) FILTER (WHERE priced OR unpriced), 0)::float8 AS cache_read,
          coalesce(sum(cache_creation_input_tokens) FILTER (WHERE priced OR unpriced), 0)::float8 AS cache_creation,
          coalesce(sum(cost_usd) FILTER (WHERE priced), 0)::float8 AS cost_usd,
          coalesce(sum(input_tokens) FILTER (WHERE unpriced AND NOT batched), 0)::float8 AS unpriced_input,
          coalesce(sum(output_tokens) FILTER (WHERE unpriced AND NOT batched), 0)::float8 AS unpriced_output,
          coalesce(sum(cache_read_input_tokens) FILTER (WHERE unpriced AND NOT batched), 0)::float8 AS unpriced_cache_read,
          coalesce(sum(cache_creation_input_tokens) FILTER (WHERE unpriced AND NOT batched), 0)::float8 AS unpriced_cache_creation,
          coalesce(sum(input_tokens) FILTER (WHERE unpriced AND batched), 0)::float8 AS batched_input,
          coalesce(sum(output_tokens) FILTER (WHERE unpriced AND batched), 0)::float8 AS batched_output,
          coalesce(sum(cache_read_input_tokens) FILTER (WHERE unpriced AND batched), 0)::float8 AS batched_cache_read,
          coalesce(sum(cache_creation_input_tokens) FILTER (WHERE unpriced AND batched), 0)::float8 AS batched_cache_creation
     FROM own
    GROUP BY key, model
    ORDER BY key, model NULLS FIRST`;
}

/** A row of USAGE_BY_MODEL_SQL as UsageByModel. */
export const usageByModelOf = (r: { model: string | null } & Record<string, number>): UsageByModel => ({
  model: r.model,
  turns: r.turns,
  toolCalls: r.tool_calls,
  failures: r.failures,
  inputTokens: r.input,
  outputTokens: r.output,
  cacheReadInputTokens: r.cache_read,
  cacheCreationInputTokens: r.cache_creation,
  costUsd: r.cost_usd,
  unpriced: {
    inputTokens: r.unpriced_input,
    outputTokens: r.unpriced_output,
    cacheReadInputTokens: r.unpriced_cache_read,
    cacheCreationInputTokens: r.unpriced_cache_creation,
  },
  unpricedBatched: {
    inputTokens: r.batched_input,
    outputTokens: r.batched_output,
    cacheReadInputTokens: r.batched_cache_read,
    cacheCreationInputTokens: r.batched_cache_creation,
  },
});
