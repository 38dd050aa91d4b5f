import { randomUUID } from 'node:crypto';
import { loadConfig } from '@parley/config';
import { conversationStreamId } from '@parley/conversation';
import { TurnToEnqueue } from '@parley/agent';
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

  const dispatcher = () => {
    const calls: TurnToEnqueue[][] = [];
    const sequencer = {
      enqueue: async (conversationId: string, turnId: string, traceparent?: string) =>
        void calls.push([{ conversationId, turnId, traceparent }]),
      enqueueAll: async (turns: TurnToEnqueue[]) => void calls.push(turns),
    };
    const sut = new TurnDispatcher(
      {} as EventStore,
      sequencer as unknown as TurnSequencer,
      loadConfig({ AUTH_JWT_SECRET: 'x'.repeat(32), DATABASE_URL: 'postgres://x/y' }),
    );
    return { sut, calls, turnIds: () => calls.map((turns) => turns.map((t) => t.turnId)) };
  };

  it('enqueues the posted turns of a batch that did not end within it, all at once, in order', async () => {
    const { sut, turnIds } = dispatcher();
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
    expect(turnIds()).toEqual([['open', 'also-open']]);
  });

  it('enqueues nothing for a batch whose turns all ended in it', async () => {
    const { sut, calls } = dispatcher();
    await sut.handleBatch([posted('answered'), stored('AssistantReplied', { turnId: 'answered', content: 'yes' })]);
    expect(calls).toEqual([]);
  });

  it("passes on the turn's trace from its post", async () => {
    const traceparent = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;
    const { sut, calls } = dispatcher();
    const event = posted('open');
    await sut.handleBatch([{ ...event, metadata: { traceparent } }]);
    expect(calls).toEqual([[{ conversationId, turnId: 'open', traceparent }]]);
  });
});
