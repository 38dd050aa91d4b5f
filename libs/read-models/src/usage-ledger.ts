import { Pool } from 'pg';
import { ConversationEvent, conversationIdOf, Usage } from '@parley/conversation';
import { StoredEvent } from '@parley/event-store';

/**
 * A line of the usage ledger (`usage_records`): an event that ends a turn, records a model call
 * or summarises the history, with its tokens and price and the reader who spent them. Content-
 * free, and kept when the conversation is erased (docs/erasure.md).
 */
export interface UsageRow {
  /** the event the line records (its key) */
  event_id: string;
  conversation_id: string;
  /** its version; null for an event never stored, its stream erased meanwhile */
  version: number | null;
  /** the reader who spent it; null once their account was erased */
  owner_id: string | null;
  turn_id: string;
  kind: 'answer' | 'failure' | 'cancel' | 'tool_call' | 'summary' | 'stopped_call';
  model: string | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  cost_usd: number;
  /** a tool call whose model call went through the Message Batches API (priced at half) */
  batched: boolean;
  at: Date;
}

const NO_TOKENS: Usage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

/**
 * The ledger's line for an event, if it records spending: a turn's ending, a tool call (with the
 * usage of its model call on the first call of an iteration), a history summary, a model call
 * stopped before its end. AssistantReplied's usage and cost already sum every call of its turn
 * that answered; a tool call's usage counts only for a turn that did not reply, a stopped call's
 * always (the usage query says so).
 */
export function ledgerRowOf(e: LedgerSource, ownerId: string | null): UsageRow | undefined {
  const conversationId = conversationIdOf(e.streamId);
  if (!conversationId) return undefined;
  const row = (
    kind: UsageRow['kind'],
    turnId: string,
    model: string | null,
    u = NO_TOKENS,
    costUsd = 0,
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
      return row('tool_call', e.data.turnId, e.data.model ?? null, e.data.usage, 0, e.data.batched === true);
    case 'HistorySummarized':
      return row('summary', e.data.turnId, e.data.model, e.data.usage, e.data.costUsd);
    case 'ModelCallStopped':
      return row('stopped_call', e.data.turnId, e.data.model, e.data.usage, 0, e.data.batched === true);
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
  return events.flatMap((e) => ledgerRowOf(e, ownerId) ?? []);
}

/** The ledger's writes outside the projection: lines an erasure saves, and readers forgotten. */
export class UsageLedger {
  constructor(private readonly db: Pick<Pool, 'query'>) {}

  /** Records lines not recorded yet (by event): the projection may have written some. */
  async record(rows: UsageRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.query(
      `INSERT INTO usage_records ${USAGE_COLUMNS_SQL} ${USAGE_ROWS_SQL('$1')} ON CONFLICT DO NOTHING`,
      [JSON.stringify(rows)],
    );
  }

  /** An erased account's lines keep the money and lose the reader. */
  async forgetReader(ownerId: string): Promise<number> {
    const { rowCount } = await this.db.query('UPDATE usage_records SET owner_id = NULL WHERE owner_id = $1', [ownerId]);
    return rowCount ?? 0;
  }
}

/** The ledger's columns, and their values read from a JSON array of UsageRow (one statement for any number). */
export const USAGE_COLUMNS_SQL = `(event_id, conversation_id, version, owner_id, turn_id, kind, model, input_tokens, output_tokens,
   cache_read_input_tokens, cache_creation_input_tokens, cost_usd, batched, at)`;
export const USAGE_ROWS_SQL = (param: string): string => `
  SELECT event_id, conversation_id, version, owner_id, turn_id, kind, model, input_tokens, output_tokens, cache_read_input_tokens,
         cache_creation_input_tokens, cost_usd, batched, at
    FROM jsonb_to_recordset(${param}::jsonb) AS u(event_id uuid, conversation_id uuid, version integer, owner_id text, turn_id uuid,
         kind text, model text, input_tokens bigint, output_tokens bigint, cache_read_input_tokens bigint,
         cache_creation_input_tokens bigint, cost_usd double precision, batched boolean, at timestamptz)`;
