import { randomUUID } from 'node:crypto';
import { loadConfig } from '@parley/config';
import { conversationStreamId } from '@parley/conversation';
import { EventStore, StoredEvent } from '@parley/event-store';
import { TurnDispatcher } from './turn-dispatcher.service';
import { TurnSequencer } from './turn-sequencer';

describe(TurnDispatcher.name, () => {
  const conversationId = randomUUID();
  let version = 0;
  const stored = (type: string, data: object): StoredEvent => ({
    id: randomUUID(),
    streamId: conversationStreamId(conversationId),
    version: ++version,
    position: String(version),
    transactionId: '1',
    metadata: {},
    occurredAt: new Date(),
    type,
    data,
  });
  const posted = (turnId: string) => stored('UserMessagePosted', { messageId: randomUUID(), turnId, content: 'hi' });

  it('enqueues the posted turns of a batch that did not end within it', async () => {
    const enqueued: string[] = [];
    const sequencer = { enqueue: async (_c: string, turnId: string) => void enqueued.push(turnId) };
    const sut = new TurnDispatcher(
      {} as EventStore,
      sequencer as unknown as TurnSequencer,
      loadConfig({ AUTH_JWT_SECRET: 'x'.repeat(32), DATABASE_URL: 'postgres://x/y' }),
    );
    await sut.handleBatch([
      posted('answered'),
      stored('ToolInvoked', { turnId: 'answered', toolUseId: 't1', name: 'search_book', input: {}, iteration: 1 }),
      posted('failed'),
      posted('open'),
      stored('AssistantReplied', { turnId: 'answered', content: 'yes' }),
      stored('TurnFailed', { turnId: 'failed', code: 'x', message: 'y', retryable: false }),
      posted('cancelled'),
      stored('TurnCancelled', { turnId: 'cancelled' }),
      posted('also-open'),
    ]);
    expect(enqueued).toEqual(['open', 'also-open']);
  });
});
