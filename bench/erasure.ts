/**
 * Erasure: how long DELETE /v1/conversations/:id holds a conversation's events in one transaction
 * (ConversationEraser: fold, tombstone, ledger lines, read models, the delete), by conversation
 * length, next to the same rows deleted by a bare `DELETE` from a copy of the log's table in a
 * transaction of its own: the floor for removing that many rows here.
 */
import { randomUUID } from 'node:crypto';
import { ConversationEvent, conversationStreamId } from '@parley/conversation';
import { ConversationEraser } from '@parley/erasure';
import { EventStore, NewEvent } from '@parley/event-store';
import { createTestDatabase } from '../test/support/test-database';
import { add } from './report';
import { fmt, pct, secs } from './util';

/** A conversation of `turns` answered search turns (4 events each), as the worker writes them. */
function conversationOf(turns: number): NewEvent<ConversationEvent>[] {
  const events: NewEvent<ConversationEvent>[] = [
    {
      id: randomUUID(),
      type: 'ConversationStarted',
      data: { ownerId: 'bench', bookId: null, title: null, readingPosition: null },
    },
  ];
  const usage = { inputTokens: 3_000, outputTokens: 200, cacheReadInputTokens: 2_000, cacheCreationInputTokens: 0 };
  for (let t = 0; t < turns; t++) {
    const turnId = randomUUID();
    const toolUseId = `toolu_${randomUUID()}`;
    events.push(
      { id: randomUUID(), type: 'UserMessagePosted', data: { messageId: randomUUID(), turnId, content: 'Who is it?' } },
      {
        id: randomUUID(),
        type: 'ToolInvoked',
        data: { turnId, toolUseId, name: 'search_book', input: { query: 'who' }, iteration: 1, usage },
      },
      {
        id: randomUUID(),
        type: 'ToolResultRecorded',
        data: { turnId, toolUseId, content: 'passage '.repeat(150), isError: false },
      },
      {
        id: randomUUID(),
        type: 'AssistantReplied',
        data: {
          turnId,
          messageId: randomUUID(),
          content: 'An answer of a few sentences. '.repeat(8),
          model: 'claude-sonnet-5-5',
          stopReason: 'end_turn',
          usage,
          costUsd: 0.01,
          citations: [],
          iterations: 2,
          latencyMs: 900,
        },
      },
    );
  }
  return events;
}

export async function erasureBench(): Promise<void> {
  const db = await createTestDatabase();
  try {
    const store = new EventStore(db.pool);
    const eraser = new ConversationEraser(store);
    await db.pool.query(
      'CREATE TABLE events_copy (LIKE events INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING INDEXES)',
    );
    for (const turns of [5, 125, 500]) {
      const runs = secs(turns > 100 ? 10 : 40, 3);
      const erasing: number[] = [];
      const floor: number[] = [];
      for (let r = 0; r < runs; r++) {
        const id = randomUUID();
        const streamId = conversationStreamId(id);
        const { events } = await store.append(streamId, conversationOf(turns), { expectedVersion: 'no_stream' });
        await db.pool.query(
          `INSERT INTO events_copy (event_id, stream_id, version, type, data, metadata, transaction_id)
           SELECT gen_random_uuid(), stream_id, version, type, data, metadata, transaction_id FROM events WHERE stream_id = $1`,
          [streamId],
        );
        let t = performance.now();
        await eraser.erase(id, { userId: 'bench', subject: 'conversation', erasureId: randomUUID() });
        erasing.push(performance.now() - t);
        t = performance.now();
        await store.withTransaction((tx) => tx.query('DELETE FROM events_copy WHERE stream_id = $1', [streamId]));
        floor.push(performance.now() - t);
        if (events.length !== 1 + 4 * turns) throw new Error('the conversation was not written whole');
      }
      const p50 = pct(erasing, 0.5);
      const floorP50 = pct(floor, 0.5);
      add({
        section: 'erasure',
        figure: `erase a conversation of ${1 + 4 * turns} events (ConversationEraser, one transaction)`,
        value: `p50 ${fmt(p50, 1)} ms, p99 ${fmt(pct(erasing, 0.99), 1)} ms`,
        n: p50,
        anchor: `bare DELETE of the same rows ${fmt(floorP50, 1)} ms`,
        ratio: p50 / floorP50,
      });
    }
  } finally {
    await db.drop();
  }
}
