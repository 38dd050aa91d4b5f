import { randomUUID } from 'node:crypto';
import { ConversationEvent, conversationStreamId } from '@parley/conversation';
import { EventStore, StoredEvent } from '@parley/event-store';
import { ConversationsProjection } from '@parley/read-models';
import { createTestDatabase, TestDatabase } from '../support/test-database';

type Data<T extends ConversationEvent['type']> = Extract<ConversationEvent, { type: T }>['data'];
const usage = { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

/** The events of one agent turn that searched the book once with `toolUseId`. */
function turn(toolUseId: string, query: string): ConversationEvent[] {
  const turnId = randomUUID();
  return [
    { type: 'UserMessagePosted', data: { messageId: randomUUID(), turnId, content: query } },
    {
      type: 'ToolInvoked',
      data: { turnId, toolUseId, name: 'search_book', input: { query }, iteration: 1 },
    } satisfies { type: 'ToolInvoked'; data: Data<'ToolInvoked'> },
    { type: 'ToolResultRecorded', data: { turnId, toolUseId, content: `[1] about ${query}`, isError: false } },
    {
      type: 'AssistantReplied',
      data: {
        turnId,
        messageId: randomUUID(),
        content: `the answer about ${query}`,
        model: 'scripted-1',
        stopReason: 'end_turn',
        usage,
        costUsd: 0,
        citations: [],
        iterations: 2,
        latencyMs: 5,
      },
    },
  ];
}

describe(ConversationsProjection.name, () => {
  let db: TestDatabase;
  let store: EventStore;
  const projection = new ConversationsProjection();

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
  });
  afterAll(() => db.drop());

  /** Appends a conversation's events to the log and returns them as stored. */
  async function conversationOf(events: ConversationEvent[]): Promise<{ id: string; stored: StoredEvent[] }> {
    const id = randomUUID();
    const started: ConversationEvent = {
      type: 'ConversationStarted',
      data: { ownerId: 'reader', bookId: null, title: null, readingPosition: null },
    };
    const { events: stored } = await store.append(
      conversationStreamId(id),
      [started, ...events].map((e) => ({ id: randomUUID(), ...e })),
      { expectedVersion: 'no_stream' },
    );
    return { id, stored };
  }

  const feed = async (events: StoredEvent[]) => {
    for (const e of events) await store.withTransaction((tx) => projection.handle(e, tx));
  };

  const messagesOf = async (conversationId: string) =>
    (await db.pool.query('SELECT * FROM messages WHERE conversation_id = $1 ORDER BY version', [conversationId])).rows;

  it("shows a tool result with its own turn's invocation when an earlier turn reused the tool id", async () => {
    const { id, stored } = await conversationOf([...turn('toolu_same', 'first'), ...turn('toolu_same', 'second')]);
    await feed(stored);
    const results = (await messagesOf(id)).filter((m) => m.role === 'tool_result');
    expect(results.map((m) => m.tool_invocations)).toEqual([
      [{ toolUseId: 'toolu_same', name: 'search_book', input: { query: 'first' } }],
      [{ toolUseId: 'toolu_same', name: 'search_book', input: { query: 'second' } }],
    ]);
  });
});
