import { StoredEvent } from '@parley/event-store';
import { ConversationEvent } from './events';
import { forkEvents } from './fork';

const alice = 'alice';
const envelope = { streamId: 'conversation-src', position: '1', transactionId: '1', occurredAt: new Date() };
/** the source's history: each event stored at its version, with the metadata its writer gave it */
const history = (...events: ConversationEvent[]): StoredEvent<ConversationEvent>[] =>
  events.map((e, i) => ({
    ...e,
    ...envelope,
    id: `src-${i + 1}`,
    version: i + 1,
    metadata: { userId: alice, n: i + 1 },
  }));

const started: ConversationEvent = {
  type: 'ConversationStarted',
  data: { ownerId: alice, bookId: 'b1', bookIds: ['b1'], title: 'Alice', readingPosition: 4 },
};
const posted = (turnId: string): ConversationEvent => ({
  type: 'UserMessagePosted',
  data: { messageId: `m-${turnId}`, turnId, content: `question ${turnId}` },
});
const cancelled = (turnId: string): ConversationEvent => ({ type: 'TurnCancelled', data: { turnId } });

describe(forkEvents.name, () => {
  it('given a history, when forked at a version, then starts from the source, copies up to it and ends open turns', () => {
    const source = {
      conversationId: 'src',
      history: history(started, posted('t1'), cancelled('t1'), posted('t2'), posted('t3')),
    };
    const events = forkEvents(source, 4, { userId: alice });
    expect(events).toEqual([
      {
        type: 'ConversationStarted',
        data: { ...started.data, forkedFrom: { conversationId: 'src', version: 4 } },
        metadata: { userId: alice, causationId: 'src-4' },
      },
      { ...posted('t1'), metadata: { userId: alice, n: 2, causationId: 'src-2' } },
      { ...cancelled('t1'), metadata: { userId: alice, n: 3, causationId: 'src-3' } },
      { ...posted('t2'), metadata: { userId: alice, n: 4, causationId: 'src-4' } },
      // t2 was open at version 4 (t3 came after and is not copied)
      { ...cancelled('t2'), metadata: { userId: alice, causationId: 'src-4' } },
    ]);
  });

  it('given books the forking reader may no longer read, then the fork ends with SourcesChanged to those they may', () => {
    const twoBooks: ConversationEvent = {
      type: 'ConversationStarted',
      data: { ownerId: alice, bookId: 'b1', bookIds: ['b1', 'b2'], title: null, readingPosition: null },
    };
    const source = { conversationId: 'src', history: history(twoBooks, posted('t1')) };
    const events = forkEvents(source, 2, { userId: alice }, [{ id: 'b2', title: 'Mine' }]);
    expect(events[events.length - 1]).toEqual({
      type: 'SourcesChanged',
      data: { bookIds: ['b2'], books: [{ id: 'b2', title: 'Mine' }] },
      metadata: { userId: alice, causationId: 'src-2' },
    });
    // every book still readable: the fork adds no change of sources
    const all = forkEvents(source, 2, { userId: alice }, [
      { id: 'b1', title: 'One' },
      { id: 'b2', title: 'Two' },
    ]);
    expect(all.map((e) => e.type)).toEqual(['ConversationStarted', 'UserMessagePosted', 'TurnCancelled']);
  });

  it('forks at version 1 as a conversation with nothing posted', () => {
    const events = forkEvents({ conversationId: 'src', history: history(started, posted('t1')) }, 1, {
      userId: 'bob',
    });
    expect(events.map((e) => e.type)).toEqual(['ConversationStarted']);
    expect(events[0].metadata).toEqual({ userId: 'bob', causationId: 'src-1' });
  });

  it('refuses a history that does not start with ConversationStarted, or is shorter than the version', () => {
    expect(() => forkEvents({ conversationId: 'src', history: history(posted('t1')) }, 1, { userId: alice })).toThrow(
      /starts with UserMessagePosted/,
    );
    expect(() => forkEvents({ conversationId: 'src', history: history(started) }, 2, { userId: alice })).toThrow(
      /no version 2/,
    );
  });
});
