import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { ConversationEvent, conversationIdOf, Usage } from '@parley/conversation';
import { StoredEvent } from '@parley/event-store';
import { SETTLE_RESERVATIONS_SQL } from './budget-reservations';
import { erasedStreamSql } from './conversation-log.queries';

/**
 * A line of the usage ledger (`usage_records`): an event that ends a turn, records a model call
 * or summarises the history, or a book's contextualisation, with its tokens and price and the
 * reader who spent them. Content-free, and kept when the conversation is erased (docs/erasure.md).
 * Each line is billed at its own time: an answer's line is its turn's last call, the calls before
 * it being the turn's tool_call lines (the usage query subtracts them from the answer's total).
 */
export interface UsageRow {
  /** the event the line records (its key) */
  event_id: string;
  /** null for a book's contextualisation */
  conversation_id: string | null;
  /** its version; null for an event never stored, its stream erased meanwhile */
  version: number | null;
  /** the reader who spent it; null once their account was erased */
  owner_id: string | null;
  turn_id: string | null;
  /** the book a contextualisation line paid for */
  book_id?: string | null;
  kind: 'answer' | 'failure' | 'cancel' | 'tool_call' | 'summary' | 'stopped_call' | 'contextualization';
  model: string | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  /** null: a call recorded before events carried their price (priced at list price when read) */
  cost_usd: number | null;
  /** a tool call whose model call went through the Message Batches API (priced at half) */
  batched: boolean;
  at: Date;
}

const NO_TOKENS: Usage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

/**
 * The ledger's line for an event, if it records spending: a turn's ending, a tool call (with the
 * usage and price of its model call on the first call of an iteration), a history summary, a
 * model call stopped before its end. AssistantReplied's usage and cost sum every call of its turn
 * that answered; the usage query counts the line net of the turn's tool calls.
 *
 * A fork's copies of its source's events (its versions up to `forkedFrom.version`) are no lines:
 * their calls were paid for, and are in the ledger, as the source's.
 */
export function ledgerRowOf(e: LedgerSource, ownerId: string | null, copiedUpTo = 0): UsageRow | undefined {
  const conversationId = conversationIdOf(e.streamId);
  if (!conversationId) return undefined;
  if (e.version !== null && e.version <= copiedUpTo) return undefined;
  const row = (
    kind: UsageRow['kind'],
    turnId: string,
    model: string | null,
    u = NO_TOKENS,
    costUsd: number | null = 0,
    batched = false,
  ) => ({
    event_id: e.id,
    conversation_id: conversationId,
    version: e.version,
    owner_id: ownerId,
    turn_id: turnId,
    kind,
    model,
    input_tokens: u.inputTokens,
    output_tokens: u.outputTokens,
    cache_read_input_tokens: u.cacheReadInputTokens,
    cache_creation_input_tokens: u.cacheCreationInputTokens,
    cost_usd: costUsd,
    batched,
    at: e.occurredAt,
  });
  switch (e.type) {
    case 'AssistantReplied':
      return row('answer', e.data.turnId, e.data.model, e.data.usage, e.data.costUsd);
    case 'TurnFailed':
      return row('failure', e.data.turnId, null);
    case 'TurnCancelled':
      return row('cancel', e.data.turnId, null);
    case 'ToolInvoked':
      // a call's later tool uses carry no usage (0); a priced call its cost; one from before prices, null
      return row(
        'tool_call',
        e.data.turnId,
        e.data.model ?? null,
        e.data.usage,
        e.data.usage ? (e.data.costUsd ?? null) : 0,
        e.data.batched === true,
      );
    case 'HistorySummarized':
      return row('summary', e.data.turnId, e.data.model, e.data.usage, e.data.costUsd);
    case 'ModelCallStopped':
      return row(
        'stopped_call',
        e.data.turnId,
        e.data.model,
        e.data.usage,
        e.data.costUsd ?? null,
        e.data.batched === true,
      );
    default:
      return undefined;
  }
}

/** An event as the ledger reads it: stored, or paid for and never stored (no version). */
export type LedgerSource = Pick<StoredEvent<ConversationEvent>, 'id' | 'streamId' | 'occurredAt'> &
  ConversationEvent & { version: number | null };

/** The ledger's lines of a whole stream (the owner read from its start), e.g. of one about to be erased. */
export function ledgerRowsOf(events: StoredEvent<ConversationEvent>[]): UsageRow[] {
  const started = events.find((e) => e.type === 'ConversationStarted');
  const ownerId = started?.type === 'ConversationStarted' ? started.data.ownerId : null;
  const copiedUpTo = started?.type === 'ConversationStarted' ? (started.data.forkedFrom?.version ?? 0) : 0;
  return events.flatMap((e) => ledgerRowOf(e, ownerId, copiedUpTo) ?? []);
}

/** The ledger's writes outside the projection: lines an erasure saves, and readers forgotten. */
@Injectable()
export class UsageLedger {
  constructor(@Inject(Pool) private readonly db: Pick<Pool, 'query'>) {}

  /**
   * Records lines not recorded yet (by event): the projection may have written some. A line of a
   * conversation its owner's account erasure took (a call paid for while the erasure ran) is
   * recorded as the erasure left the others: under the reader's pseudonym, without their id.
   * The budget reservations the lines account for (`settles`: by id; a turn's, as the projection
   * settles them) go in the same statement.
   */
  async record(rows: UsageRow[], settles: string[] = []): Promise<void> {
    if (rows.length === 0 && settles.length === 0) return;
    await this.db.query(
      `WITH r AS (${USAGE_ROWS_SQL('$1')}),
            settled AS (${SETTLE_RESERVATIONS_SQL('$1')}),
            released AS (DELETE FROM budget_reservations WHERE id = ANY($2::uuid[])),
            named AS (
              SELECT r.*, ${erasedStreamSql(`'conversation-' || r.conversation_id::text`, { bySubject: 'account' })} AS erased
                FROM r)
       INSERT INTO usage_records ${USAGE_COLUMNS_WITH_KEY_SQL}
       SELECT event_id, conversation_id, version, CASE WHEN erased THEN NULL ELSE owner_id END, turn_id, book_id, kind,
              model, input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens, cost_usd,
              batched, at, CASE WHEN erased THEN ledger_pseudonym(owner_id) END
         FROM named
       ON CONFLICT DO NOTHING`,
      [JSON.stringify(rows), settles],
    );
  }

  /**
   * An erased account's lines keep the money and lose the reader's id; until their month is over
   * they keep the reader's pseudonym, so the month's spend still counts against the same `sub`.
   * Their budget reservations go (their calls in flight land in the ledger under the pseudonym).
   */
  async forgetReader(ownerId: string): Promise<number> {
    await this.db.query('DELETE FROM budget_reservations WHERE owner_id = $1', [ownerId]);
    const { rowCount } = await this.db.query(
      'UPDATE usage_records SET owner_id = NULL, owner_key = ledger_pseudonym(owner_id) WHERE owner_id = $1',
      [ownerId],
    );
    return rowCount ?? 0;
  }

  /** Erased readers' pseudonyms on lines of months that are over: those lines are nobody's now. */
  async forgetPastPseudonyms(now = new Date()): Promise<number> {
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const { rowCount } = await this.db.query(
      'UPDATE usage_records SET owner_key = NULL WHERE owner_key IS NOT NULL AND owner_id IS NULL AND at < $1',
      [monthStart],
    );
    return rowCount ?? 0;
  }
}

/** The ledger's columns, and their values read from a JSON array of UsageRow (one statement for any number). */
export const USAGE_COLUMNS_SQL = `(event_id, conversation_id, version, owner_id, turn_id, book_id, kind, model, input_tokens,
   output_tokens, cache_read_input_tokens, cache_creation_input_tokens, cost_usd, batched, at)`;
const USAGE_COLUMNS_WITH_KEY_SQL = `${USAGE_COLUMNS_SQL.slice(0, -1)}, owner_key)`;
export const USAGE_ROWS_SQL = (param: string): string => `
  SELECT event_id, conversation_id, version, owner_id, turn_id, book_id, kind, model, input_tokens, output_tokens,
         cache_read_input_tokens, cache_creation_input_tokens, cost_usd, batched, at
    FROM jsonb_to_recordset(${param}::jsonb) AS u(event_id uuid, conversation_id uuid, version integer, owner_id text, turn_id uuid,
         book_id uuid, kind text, model text, input_tokens bigint, output_tokens bigint, cache_read_input_tokens bigint,
         cache_creation_input_tokens bigint, cost_usd double precision, batched boolean, at timestamptz)`;
