import { ConversationLog, type EventEnvelope, passagesOf, where } from '../../apps/web/src/model';

let v = 0;
const ev = (type: string, data: Record<string, unknown> = {}): EventEnvelope => ({
  id: `e${++v}`,
  type,
  conversationId: 'c1',
  version: v,
  occurredAt: new Date(0).toISOString(),
  data,
});

const chunk = (n: number) => ({
  chunkId: `k${n}`,
  chapter: `Chapter ${n}`,
  chapterIndex: n,
  score: 1,
  section: null,
  page: null,
});

describe('the web page’s conversation fold', () => {
  beforeEach(() => (v = 0));

  it('holds each event once: a replay after a reconnect adds nothing', () => {
    const log = new ConversationLog();
    const events = [ev('ConversationStarted', { title: 'T', bookId: 'b', readingPosition: null })];
    events.push(ev('UserMessagePosted', { turnId: 't1', messageId: 'm1', content: 'hi' }));
    for (const e of events) expect(log.add(e)).toBe(true);
    for (const e of events) expect(log.add(e)).toBe(false);
    expect(log.view().items.filter((i) => i.kind === 'user')).toHaveLength(1);
    expect(log.view().openTurns).toEqual(['t1']);
  });

  it('streams deltas of the latest attempt of each iteration, then shows the stored answer alone', () => {
    const log = new ConversationLog();
    log.add(ev('ConversationStarted', { title: null, bookId: null, readingPosition: null }));
    log.add(ev('UserMessagePosted', { turnId: 't1', messageId: 'm1', content: 'q' }));
    log.addDelta({ turnId: 't1', iteration: 1, attempt: 1, index: 0, text: 'Hel' });
    log.addDelta({ turnId: 't1', iteration: 1, attempt: 2, index: 0, text: 'Hello ' });
    log.addDelta({ turnId: 't1', iteration: 1, attempt: 1, index: 1, text: 'stale' });
    log.addDelta({ turnId: 't1', iteration: 1, attempt: 2, index: 1, text: 'there' });
    expect(log.view().items[1]).toMatchObject({ kind: 'assistant', status: 'working', text: 'Hello there' });
    log.add(ev('AssistantReplied', { turnId: 't1', messageId: 'm2', content: 'Hello there.', citations: [] }));
    log.addDelta({ turnId: 't1', iteration: 1, attempt: 2, index: 2, text: ' late' });
    expect(log.view().items[1]).toMatchObject({ status: 'done', text: 'Hello there.' });
    expect(log.view().openTurns).toEqual([]);
  });

  it('numbers the passages of search results as the answer cites them, and shows an earlier version', () => {
    const log = new ConversationLog();
    log.add(ev('ConversationStarted', { title: 'Old', bookId: 'b', readingPosition: null }));
    log.add(ev('UserMessagePosted', { turnId: 't1', messageId: 'm1', content: 'q' }));
    log.add(ev('ToolInvoked', { turnId: 't1', toolUseId: 'u1', name: 'search_book', input: { query: 'x' } }));
    const content = '2 passages for "x":\n\n[1] Chapter 1\nFirst text.\n\n[2] Chapter 2\nSecond\n\ntext.';
    log.add(ev('ToolResultRecorded', { turnId: 't1', toolUseId: 'u1', content, chunks: [chunk(1), chunk(2)] }));
    log.add(ev('AssistantReplied', { turnId: 't1', messageId: 'm2', content: 'See [2].', citations: [chunk(2)] }));
    log.add(ev('ConversationRenamed', { title: 'New' }));
    const answer = log.view().items[1];
    expect(answer).toMatchObject({ kind: 'assistant', cited: [{ n: 2, chunkId: 'k2', text: 'Second\n\ntext.' }] });
    expect(log.view().title).toBe('New');
    expect(log.view(4).title).toBe('Old');
    expect(log.view(4).items[1]).toMatchObject({ status: 'working', text: '' });
  });

  it('parses passages numbered from citationStart and says where they are', () => {
    const p = passagesOf('1 passage:\n\n[4] Chapter 3 · p. 7\nBody.', [{ ...chunk(3), page: 7 }], 4);
    expect(p).toEqual([expect.objectContaining({ n: 4, text: 'Body.' })]);
    expect(where(p[0])).toBe('Chapter 3 · p. 7');
  });
});
