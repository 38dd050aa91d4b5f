import { Pool } from 'pg';
import { CheckpointMove, checkpointMoveSql, movesFromStart } from '@parley/event-store';
import { SETTLE_RESERVATIONS_SQL } from './budget-reservations';
import { USAGE_COLUMNS_SQL, USAGE_ROWS_SQL, UsageRow } from './usage-ledger';

export interface ConversationRow {
  id: string;
  owner_id: string;
  book_id: string | null;
  book_ids: string[];
  title: string | null;
  reading_position: number | null;
  forked_from: unknown;
  version: number;
  message_count: number;
  created_at: Date;
  last_activity_at: Date;
}

export interface MessageRow {
  id: string;
  conversation_id: string;
  version: number;
  role: 'user' | 'assistant' | 'tool_result';
  turn_id: string;
  content: string;
  selected_text?: string | null;
  tool_invocations?: unknown[];
  citations?: unknown[];
  model?: string;
  usage?: unknown;
  cost_usd?: number;
  is_error?: boolean;
  created_at: Date;
}

export interface ToolCall {
  toolUseId: string;
  name: string;
  input: unknown;
}

/** What one batch leaves to write: rows to delete, conversations to upsert, messages to insert. */
export interface ReadModelChanges {
  deleted: string[];
  conversations: ConversationRow[];
  messages: MessageRow[];
  usage: UsageRow[];
}

/** The projection's SQL: each call is one statement for any number of rows. */
export class ReadModelWrites {
  constructor(private readonly db: Pick<Pool, 'query'>) {}

  /** Messages whose events were redacted: their content and citations as the events now say. */
  async redactMessages(
    rows: Array<{ conversationId: string; version: number; content: string; citations: unknown }>,
  ): Promise<void> {
    if (rows.length === 0) return;
    await this.db.query(
      `UPDATE messages m SET content = r.content, citations = r.citations
         FROM jsonb_to_recordset($1::jsonb) AS r(conversation_id uuid, version integer, content text, citations jsonb)
        WHERE m.conversation_id = r.conversation_id AND m.version = r.version`,
      [
        JSON.stringify(
          rows.map((r) => ({
            conversation_id: r.conversationId,
            version: r.version,
            content: r.content,
            citations: r.citations,
          })),
        ),
      ],
    );
  }

  async conversations(ids: string[]): Promise<Map<string, ConversationRow>> {
    const { rows } = await this.db.query<ConversationRow>(
      `SELECT id, owner_id, book_id, book_ids, title, reading_position, forked_from, version, message_count,
              created_at, last_activity_at
         FROM conversations WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * A batch's changes and its checkpoint's move in one statement: every write is joined to the
   * move (`moved`), so when the checkpoint was not where the batch started nothing is written.
   * Without a move (a caller feeding events by hand) the writes go in unguarded. New rows are
   * inserted; a stored conversation changes only to a later version than it has; a message
   * already there (by conversation and version) is left as it is. The budget reservations the
   * ledger's new lines account for go in the same statement: the money is counted once, never none.
   */
  async write(changes: ReadModelChanges, move?: CheckpointMove): Promise<boolean> {
    const checkpoint = move ? checkpointMoveSql(move, 5) : undefined;
    const { rows } = await this.db.query<{ moved: number }>({
      name: !move
        ? 'parley_read_models_write_unguarded_v5'
        : `parley_read_models_write_v5${movesFromStart(move) ? '_from_start' : ''}`,
      text: `WITH moved AS (${checkpoint?.sql ?? 'SELECT 1 AS moved'}),
      deleted AS (
        DELETE FROM conversations WHERE id = ANY($1::uuid[]) AND EXISTS (SELECT 1 FROM moved)
      ), upserted AS (
        INSERT INTO conversations AS c (id, owner_id, book_id, book_ids, title, reading_position, forked_from,
                                        version, message_count, created_at, last_activity_at)
        SELECT id, owner_id, book_id, book_ids, title, reading_position, forked_from, version, message_count,
               created_at, last_activity_at
          FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, owner_id text, book_id uuid, book_ids uuid[], title text,
               reading_position integer, forked_from jsonb, version integer, message_count integer,
               created_at timestamptz, last_activity_at timestamptz)
         WHERE EXISTS (SELECT 1 FROM moved)
        ON CONFLICT (id) DO UPDATE SET title = excluded.title, reading_position = excluded.reading_position,
               book_id = excluded.book_id, book_ids = excluded.book_ids,
               version = excluded.version, message_count = excluded.message_count,
               last_activity_at = excluded.last_activity_at
         WHERE c.version < excluded.version
      ), inserted AS (
        INSERT INTO messages (id, conversation_id, version, role, turn_id, content, selected_text, tool_invocations,
                              citations, model, usage, cost_usd, is_error, created_at)
        SELECT id, conversation_id, version, role, turn_id, content, selected_text, tool_invocations, citations,
               model, usage, cost_usd, is_error, created_at
          FROM jsonb_to_recordset($3::jsonb) AS m(id text, conversation_id uuid, version integer, role text,
               turn_id uuid, content text, selected_text text, tool_invocations jsonb, citations jsonb, model text,
               usage jsonb, cost_usd double precision, is_error boolean, created_at timestamptz)
         WHERE EXISTS (SELECT 1 FROM moved)
        ON CONFLICT (conversation_id, version) DO NOTHING
      ), usage AS (
        INSERT INTO usage_records ${USAGE_COLUMNS_SQL} ${USAGE_ROWS_SQL('$4')}
         WHERE EXISTS (SELECT 1 FROM moved)
        ON CONFLICT (event_id) DO NOTHING
      ), settled AS (${SETTLE_RESERVATIONS_SQL('$4', 'EXISTS (SELECT 1 FROM moved)')}
      )
      SELECT count(*)::int AS moved FROM moved`,
      values: [
        changes.deleted,
        JSON.stringify(changes.conversations),
        JSON.stringify(changes.messages),
        JSON.stringify(changes.usage),
        ...(checkpoint?.values ?? []),
      ],
    });
    return rows[0].moved === 1;
  }
}
