import { PoolClient } from 'pg';
import { conversationIdOf, isConversationEvent, titleFromMessage } from '@parley/conversation';
import { LogConsumer, StoredEvent } from '@parley/event-store';

export const READ_MODELS_CONSUMER = 'read-models';

/**
 * Builds the `conversations` and `messages` read models from the log. Each write is guarded by
 * the stream version (and a start by the stream's deletion), so replaying an event
 * (at-least-once delivery, or the log delivering it twice) changes nothing.
 */
export class ConversationsProjection implements LogConsumer {
  readonly name = READ_MODELS_CONSUMER;

  async handle(stored: StoredEvent, tx: PoolClient): Promise<void> {
    const conversationId = conversationIdOf(stored.streamId);
    // a type from a newer build: nothing to show for it here
    if (!conversationId || !isConversationEvent(stored)) return;
    const event = stored;
    const at = stored.occurredAt;
    const v = stored.version;
    const bump = (set = '', params: unknown[] = []) =>
      tx.query(`UPDATE conversations SET version = $2, last_activity_at = $3 ${set} WHERE id = $1 AND version < $2`, [
        conversationId,
        v,
        at,
        ...params,
      ]);

    switch (event.type) {
      case 'ConversationStarted': {
        const d = event.data;
        // the row is gone once deleted, so no version can guard it: a redelivered start must
        // look for the deletion in the log itself, or it would bring the conversation back
        await tx.query(
          `INSERT INTO conversations (id, owner_id, book_id, title, reading_position, forked_from, version, created_at, last_activity_at)
           SELECT $1, $2, $3, $4, $5, $6, $7, $8, $8
            WHERE NOT EXISTS (SELECT 1 FROM events WHERE stream_id = $9 AND type = 'ConversationDeleted')
           ON CONFLICT (id) DO NOTHING`,
          [
            conversationId,
            d.ownerId,
            d.bookId,
            d.title,
            d.readingPosition,
            d.forkedFrom ?? null,
            v,
            at,
            stored.streamId,
          ],
        );
        return;
      }
      case 'ConversationRenamed':
        await bump(', title = $4', [event.data.title]);
        return;
      case 'ReadingPositionChanged':
        await bump(', reading_position = $4', [event.data.readingPosition]);
        return;
      case 'UserMessagePosted': {
        const d = event.data;
        const moved = await bump(', message_count = message_count + 1, title = coalesce(title, $4)', [
          titleFromMessage(d.content),
        ]);
        if (moved.rowCount === 0) return;
        await this.insertMessage(tx, conversationId, stored, {
          id: d.messageId,
          role: 'user',
          turnId: d.turnId,
          content: d.content,
          selectedText: d.selectedText ?? null,
        });
        return;
      }
      case 'ToolInvoked':
        await bump();
        return;
      case 'ToolResultRecorded': {
        const d = event.data;
        if ((await bump()).rowCount === 0) return;
        const { rows } = await tx.query<{ data: { name: string; input: unknown } }>(
          `SELECT data FROM events
            WHERE stream_id = $1 AND type = 'ToolInvoked' AND data->>'turnId' = $2 AND data->>'toolUseId' = $3
            ORDER BY version LIMIT 1`,
          [stored.streamId, d.turnId, d.toolUseId],
        );
        const invocation = rows[0]?.data;
        await this.insertMessage(tx, conversationId, stored, {
          id: d.toolUseId,
          role: 'tool_result',
          turnId: d.turnId,
          content: d.content,
          isError: d.isError,
          toolInvocations: invocation
            ? [{ toolUseId: d.toolUseId, name: invocation.name, input: invocation.input }]
            : [],
          citations: d.chunks ?? [],
        });
        return;
      }
      case 'AssistantReplied': {
        const d = event.data;
        if ((await bump(', message_count = message_count + 1')).rowCount === 0) return;
        const { rows } = await tx.query<{ data: { toolUseId: string; name: string; input: unknown } }>(
          `SELECT data FROM events WHERE stream_id = $1 AND type = 'ToolInvoked' AND data->>'turnId' = $2 ORDER BY version`,
          [stored.streamId, d.turnId],
        );
        await this.insertMessage(tx, conversationId, stored, {
          id: d.messageId,
          role: 'assistant',
          turnId: d.turnId,
          content: d.content,
          toolInvocations: rows.map((r) => ({ toolUseId: r.data.toolUseId, name: r.data.name, input: r.data.input })),
          citations: d.citations,
          model: d.model,
          usage: d.usage,
          costUsd: d.costUsd,
        });
        return;
      }
      case 'TurnFailed':
      case 'TurnCancelled':
        await bump();
        return;
      case 'ConversationDeleted':
        await tx.query('DELETE FROM conversations WHERE id = $1', [conversationId]);
        return;
      default: {
        const unknown: never = event;
        void unknown; // an event type from a newer build: nothing to show for it here
      }
    }
  }

  private async insertMessage(
    tx: PoolClient,
    conversationId: string,
    stored: StoredEvent,
    m: {
      id: string;
      role: 'user' | 'assistant' | 'tool_result';
      turnId: string;
      content: string;
      selectedText?: string | null;
      toolInvocations?: unknown[];
      citations?: unknown[];
      model?: string;
      usage?: unknown;
      costUsd?: number;
      isError?: boolean;
    },
  ): Promise<void> {
    await tx.query(
      `INSERT INTO messages (id, conversation_id, version, role, turn_id, content, selected_text, tool_invocations,
                             citations, model, usage, cost_usd, is_error, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
       ON CONFLICT (conversation_id, version) DO NOTHING`,
      [
        m.id,
        conversationId,
        stored.version,
        m.role,
        m.turnId,
        m.content,
        m.selectedText ?? null,
        m.toolInvocations ? JSON.stringify(m.toolInvocations) : null,
        m.citations ? JSON.stringify(m.citations) : null,
        m.model ?? null,
        m.usage ? JSON.stringify(m.usage) : null,
        m.costUsd ?? null,
        m.isError ?? null,
        stored.occurredAt,
      ],
    );
  }
}
