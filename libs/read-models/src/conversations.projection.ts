import { PoolClient } from 'pg';
import { ConversationEvent, conversationIdOf, isConversationEvent, titleFromMessage } from '@parley/conversation';
import { LogConsumer, StoredEvent } from '@parley/event-store';
import { MessageRow, ReadModelWrites } from './read-model.writes';

export const READ_MODELS_CONSUMER = 'read-models';

/** A message row to write, and whether it still needs the tool calls it shows (its own, or its turn's). */
type PendingMessage = MessageRow & { streamId: string; needsInvocations?: 'one' | 'turn' };

/**
 * Builds the `conversations` and `messages` read models from the log, a batch at a time: the
 * batch's conversations are read in one statement, its events applied to them in memory, and the
 * result written back in a few statements, however many events the batch holds (a rebuild feeds
 * batches of 1,000). Each change is guarded by the stream version (and a start by the stream's
 * deletion), so replaying an event (at-least-once delivery, or the log delivering it twice)
 * changes nothing.
 */
export class ConversationsProjection implements LogConsumer {
  readonly name = READ_MODELS_CONSUMER;

  handle(stored: StoredEvent, tx: PoolClient): Promise<void> {
    return this.handleBatch([stored], tx);
  }

  async handleBatch(batch: StoredEvent[], tx: PoolClient): Promise<void> {
    // types from a newer build, and other streams: nothing to show for them here
    const events = batch.filter(
      (e): e is StoredEvent<ConversationEvent> => isConversationEvent(e) && conversationIdOf(e.streamId) !== undefined,
    );
    if (events.length === 0) return;
    const db = new ReadModelWrites(tx);
    const ids = [...new Set(events.map((e) => conversationIdOf(e.streamId)!))];
    const rows = await db.conversations(ids);
    const starts = events.filter((e) => e.type === 'ConversationStarted').map((e) => e.streamId);
    // the row is gone once deleted, so no version can guard a start: look for the deletion in the log
    const deletedInLog = starts.length > 0 ? await db.streamsWithDeletion(starts) : new Set<string>();

    const changed = new Set<string>();
    const deleted = new Set<string>();
    const messages: PendingMessage[] = [];
    for (const e of events) {
      const id = conversationIdOf(e.streamId)!;
      if (e.type === 'ConversationStarted') {
        if (rows.has(id) || deleted.has(id) || deletedInLog.has(e.streamId)) continue;
        const d = e.data;
        rows.set(id, {
          id,
          owner_id: d.ownerId,
          book_id: d.bookId,
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
        case 'UserMessagePosted':
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
        case 'ToolResultRecorded':
          message({
            id: e.data.toolUseId,
            role: 'tool_result',
            turn_id: e.data.turnId,
            content: e.data.content,
            is_error: e.data.isError,
            citations: e.data.chunks ?? [],
            tool_invocations: [],
            needsInvocations: 'one',
          });
          break;
        case 'AssistantReplied':
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
            tool_invocations: [],
            needsInvocations: 'turn',
          });
          break;
        case 'ConversationDeleted':
          rows.delete(id);
          changed.delete(id);
          deleted.add(id);
          break;
        default:
          break; // ToolInvoked, TurnFailed, TurnCancelled: the version and activity only
      }
    }

    const kept = messages.filter((m) => !deleted.has(m.conversation_id));
    await this.attachInvocations(db, kept);
    await db.deleteConversations([...deleted]);
    await db.upsertConversations([...changed].map((id) => rows.get(id)!));
    await db.insertMessages(kept.map(({ needsInvocations: _n, streamId: _s, ...m }) => m));
  }

  /**
   * The tool calls a tool result answers (its own call) or an answer followed (every call of its
   * turn), read from the log: the ToolInvoked events are stored there, in this batch or before.
   */
  private async attachInvocations(db: ReadModelWrites, messages: PendingMessage[]): Promise<void> {
    const needing = messages.filter((m) => m.needsInvocations);
    if (needing.length === 0) return;
    const calls = await db.toolCallsOfTurns(needing.map((m) => ({ streamId: m.streamId, turnId: m.turn_id })));
    for (const m of needing) {
      const ofTurn = calls.get(`${m.streamId}/${m.turn_id}`) ?? [];
      m.tool_invocations =
        m.needsInvocations === 'turn' ? ofTurn : ofTurn.filter((c) => c.toolUseId === m.id).slice(0, 1);
    }
  }
}
