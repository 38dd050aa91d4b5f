import { Pool } from 'pg';
import {
  ConversationEvent,
  conversationIdOf,
  isConversationEvent,
  startedBookIds,
  titleFromMessage,
  turnKey,
  turnKeyOf,
} from '@parley/conversation';
import { CheckpointMove, SingleStatementLogConsumer, StoredEvent } from '@parley/event-store';
import { ConversationLogQueries } from './conversation-log.queries';
import { ConversationRow, MessageRow, ReadModelWrites, ToolCall } from './read-model.writes';
import { ledgerRowOf, UsageRow } from './usage-ledger';

export const READ_MODELS_CONSUMER = 'read-models';

/** A message row to write, and whether it still needs the tool calls it shows (its own, or its turn's). */
type PendingMessage = MessageRow & { streamId: string; needsInvocations?: 'one' | 'turn' };

/** How many conversation rows, and open turns' tool calls, the projection keeps in memory. */
const KEPT_CONVERSATIONS = 10_000;
const KEPT_TURNS = 10_000;

/**
 * Builds the `conversations` and `messages` read models from the log, a batch at a time: the
 * batch's events are applied in memory to its conversations and the result written back, with
 * the checkpoint's move, in one statement however many events the batch holds (a rebuild feeds
 * batches of 1,000). Each change is guarded by the stream version (and a start by the stream's
 * deletion), so replaying an event (at-least-once delivery, or the log delivering it twice)
 * changes nothing.
 *
 * The rows it wrote and the tool calls of turns still open are kept in memory while its runner's
 * chain of checkpoint moves holds (nobody else wrote in between), so a live batch reads nothing
 * back: a turn's events cost one statement each instead of a transaction with three reads. What
 * it does not hold (a conversation it has not seen, a turn that began before the chain) it reads.
 */
export class ConversationsProjection implements SingleStatementLogConsumer {
  readonly name = READ_MODELS_CONSUMER;
  readonly singleStatement = true;
  /** conversation id → its row as written (null: no row), least recently used first */
  private readonly rows = new Map<string, ConversationRow | null>();
  /** turnKey → the tool calls of a turn whose UserMessagePosted this chain applied */
  private readonly turnCalls = new Map<string, ToolCall[]>();

  forget(): void {
    this.rows.clear();
    this.turnCalls.clear();
  }

  /**
   * Applies a batch; with `move`, only if the checkpoint is still at `move.from` (false: nothing
   * written). Without one the writes go in unguarded, for a caller that feeds events itself.
   */
  async applyBatch(batch: StoredEvent[], pool: Pick<Pool, 'query'>, move?: CheckpointMove): Promise<boolean> {
    // types from a newer build, and other streams: nothing to show for them here
    const events = batch.filter(
      (e): e is StoredEvent<ConversationEvent> => isConversationEvent(e) && conversationIdOf(e.streamId) !== undefined,
    );
    const db = new ReadModelWrites(pool);
    const log = new ConversationLogQueries(pool);
    if (events.length === 0)
      return move ? db.write({ deleted: [], conversations: [], messages: [], usage: [] }, move) : true;
    const ids = [...new Set(events.map((e) => conversationIdOf(e.streamId)!))];
    const rows = await this.rowsOf(ids, db);
    // the batch's changes to the kept tool calls (undefined: the turn ended), kept once written
    const calls = new Map<string, ToolCall[] | undefined>();
    const callsOf = (key: string) => (calls.has(key) ? calls.get(key) : this.turnCalls.get(key));
    const starts = events.filter((e) => e.type === 'ConversationStarted').map((e) => e.streamId);
    // the row is gone once deleted, so no version can guard a start: look for the deletion in the log
    const deletedInLog = starts.length > 0 ? await log.streamsWithDeletion(starts) : new Set<string>();

    const changed = new Set<string>();
    const deleted = new Set<string>();
    const messages: PendingMessage[] = [];
    const usage: UsageRow[] = [];
    for (const e of events) {
      const id = conversationIdOf(e.streamId)!;
      if (e.type === 'ConversationStarted') {
        if (rows.has(id) || deleted.has(id) || deletedInLog.has(e.streamId)) continue;
        const d = e.data;
        rows.set(id, {
          id,
          owner_id: d.ownerId,
          book_id: startedBookIds(d)[0] ?? null,
          book_ids: startedBookIds(d),
          title: d.title,
          reading_position: d.readingPosition,
          forked_from: d.forkedFrom ?? null,
          version: e.version,
          message_count: 0,
          created_at: e.occurredAt,
          last_activity_at: e.occurredAt,
        });
        changed.add(id);
        continue;
      }
      const row = rows.get(id);
      if (!row || row.version >= e.version) continue; // no conversation (deleted), or already applied
      row.version = e.version;
      row.last_activity_at = e.occurredAt;
      changed.add(id);
      const spent = ledgerRowOf(e, row.owner_id, copiedUpTo(row));
      if (spent) usage.push(spent);
      const message = (m: Omit<PendingMessage, 'conversation_id' | 'version' | 'created_at' | 'streamId'>) =>
        messages.push({
          ...m,
          conversation_id: id,
          version: e.version,
          created_at: e.occurredAt,
          streamId: e.streamId,
        });
      switch (e.type) {
        case 'ConversationRenamed':
          row.title = e.data.title;
          break;
        case 'ReadingPositionChanged':
          row.reading_position = e.data.readingPosition;
          break;
        case 'SourcesChanged':
          row.book_ids = e.data.bookIds;
          row.book_id = e.data.bookIds[0] ?? null;
          break;
        case 'UserMessagePosted':
          calls.set(turnKeyOf(e), []);
          row.message_count++;
          row.title ??= titleFromMessage(e.data.content);
          message({
            id: e.data.messageId,
            role: 'user',
            turn_id: e.data.turnId,
            content: e.data.content,
            selected_text: e.data.selectedText ?? null,
          });
          break;
        case 'ToolInvoked': {
          const known = callsOf(turnKeyOf(e));
          const { toolUseId, name, input } = e.data;
          if (known) calls.set(turnKeyOf(e), [...known, { toolUseId, name, input }]);
          break;
        }
        case 'ToolResultRecorded': {
          const own = callsOf(turnKeyOf(e))?.find((c) => c.toolUseId === e.data.toolUseId);
          message({
            id: e.data.toolUseId,
            role: 'tool_result',
            turn_id: e.data.turnId,
            content: e.data.content,
            is_error: e.data.isError,
            citations: e.data.chunks ?? [],
            tool_invocations: own ? [own] : [],
            needsInvocations: callsOf(turnKeyOf(e)) ? undefined : 'one',
          });
          break;
        }
        case 'AssistantReplied': {
          const known = callsOf(turnKeyOf(e));
          calls.set(turnKeyOf(e), undefined);
          row.message_count++;
          message({
            id: e.data.messageId,
            role: 'assistant',
            turn_id: e.data.turnId,
            content: e.data.content,
            citations: e.data.citations,
            model: e.data.model,
            usage: e.data.usage,
            cost_usd: e.data.costUsd,
            tool_invocations: known ?? [],
            needsInvocations: known ? undefined : 'turn',
          });
          break;
        }
        case 'TurnFailed':
        case 'TurnCancelled':
          calls.set(turnKeyOf(e), undefined);
          break;
        case 'ConversationDeleted':
        case 'ConversationErased':
          rows.delete(id);
          changed.delete(id);
          deleted.add(id);
          break;
        default:
          break; // the version and activity only
      }
    }

    const kept = messages.filter((m) => !deleted.has(m.conversation_id));
    await this.attachInvocations(log, kept);
    const written = await db.write(
      {
        deleted: [...deleted],
        conversations: [...changed].map((id) => rows.get(id)!),
        messages: kept.map(({ needsInvocations: _n, streamId: _s, ...m }) => m),
        usage, // money spent stays spent, whatever became of the conversation
      },
      move,
    );
    if (written) this.keep(ids, rows, calls);
    return written;
  }

  /** The batch's conversations as copies, from memory where kept, the rest read in one statement. */
  private async rowsOf(ids: string[], db: ReadModelWrites): Promise<Map<string, ConversationRow>> {
    const rows = new Map<string, ConversationRow>();
    const missing = ids.filter((id) => !this.rows.has(id));
    const read = missing.length > 0 ? await db.conversations(missing) : new Map<string, ConversationRow>();
    for (const id of ids) {
      const row = this.rows.has(id) ? this.rows.get(id) : read.get(id);
      if (row) rows.set(id, { ...row });
    }
    return rows;
  }

  /** After a write: the batch's rows as written, and its turns' tool calls. */
  private keep(ids: string[], rows: Map<string, ConversationRow>, calls: Map<string, ToolCall[] | undefined>): void {
    for (const id of ids) {
      this.rows.delete(id);
      this.rows.set(id, rows.get(id) ?? null);
    }
    while (this.rows.size > KEPT_CONVERSATIONS) this.rows.delete(this.rows.keys().next().value!);
    for (const [key, list] of calls) {
      if (list) this.turnCalls.set(key, list);
      else this.turnCalls.delete(key);
    }
    if (this.turnCalls.size > KEPT_TURNS) this.turnCalls.clear(); // turns left open: read from the log instead
  }

  /**
   * The tool calls a tool result answers (its own call) or an answer followed (every call of its
   * turn) when memory does not hold them, read from the log: the ToolInvoked events are stored
   * there, in this batch or before.
   */
  private async attachInvocations(log: ConversationLogQueries, messages: PendingMessage[]): Promise<void> {
    const needing = messages.filter((m) => m.needsInvocations);
    if (needing.length === 0) return;
    const calls = await log.toolCallsOfTurns(needing.map((m) => ({ streamId: m.streamId, turnId: m.turn_id })));
    for (const m of needing) {
      const ofTurn = calls.get(turnKey(m.streamId, m.turn_id)) ?? [];
      m.tool_invocations =
        m.needsInvocations === 'turn' ? ofTurn : ofTurn.filter((c) => c.toolUseId === m.id).slice(0, 1);
    }
  }
}

/** A fork's last version copied from its source (0: no fork). */
function copiedUpTo(row: ConversationRow): number {
  const forkedFrom = row.forked_from as { version?: unknown } | null;
  return typeof forkedFrom?.version === 'number' ? forkedFrom.version : 0;
}
