import type { NewEvent, StoredEvent } from '@parley/event-store';
import { ConversationEvent, isConversationEvent } from './events';
import { fold } from './state';

describe(isConversationEvent.name, () => {
  const envelope = { id: 'e', streamId: 'conversation-c', position: '1', transactionId: '1', metadata: {} };
  const stored = (version: number, type: string, data: unknown): StoredEvent => ({
    ...envelope,
    version,
    occurredAt: new Date(),
    type,
    data,
  });

  it('narrows log events of known types to the contract, and leaves types of newer builds out', () => {
    const log = [
      stored(1, 'ConversationStarted', { ownerId: 'u', bookId: null, title: null, readingPosition: null }),
      stored(2, 'SomethingFromTheFuture', {}),
      stored(3, 'ConversationRenamed', { title: 'typed' }),
    ];
    const known = log.filter(isConversationEvent);
    expect(known.map((e) => e.type)).toEqual(['ConversationStarted', 'ConversationRenamed']);
    expect(fold(known)).toMatchObject({ status: 'active', title: 'typed', version: 2 });
  });

  it('folds a history cut as a version of the conversation that changes nothing else', () => {
    const started = stored(1, 'ConversationStarted', {
      ownerId: 'u',
      bookId: null,
      title: null,
      readingPosition: null,
    });
    const posted = stored(2, 'UserMessagePosted', { messageId: 'm', turnId: 't', content: 'q' });
    const before = fold([started, posted].filter(isConversationEvent));
    const cuts = [
      stored(3, 'HistorySummarized', {
        turnId: 't',
        coversVersions: [1, 1],
        summary: 's',
        usage: {},
        model: 'm',
        costUsd: 0,
      }),
      stored(4, 'HistoryTrimmed', { turnId: 't', droppedVersions: [1, 1], reason: 'r' }),
    ].filter(isConversationEvent);
    expect(cuts).toHaveLength(2);
    expect(fold(cuts, before)).toEqual({ ...before, version: 4 });
  });
});

/** The contract at compile time (checked by `npm run lint`): writers cannot leave the union. */
export function typeChecks(append: (events: NewEvent<ConversationEvent>[]) => void): void {
  append([{ id: 'x', type: 'ConversationRenamed', data: { title: 't' } }]);
  // @ts-expect-error a type that is not in the union
  append([{ id: 'x', type: 'ConversationRetitled', data: { title: 't' } }]);
  // @ts-expect-error data of another member of the union
  append([{ id: 'x', type: 'ConversationRenamed', data: { turnId: 't' } }]);
}
