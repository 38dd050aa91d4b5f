import { parseAnnouncement } from './announcement';

describe(parseAnnouncement.name, () => {
  it('reads a stream id alone (an announcement of several appends, or of an older release) as carrying no events', () => {
    expect(parseAnnouncement('conversation-1')).toEqual({ streamId: 'conversation-1', events: undefined });
  });

  it('reads the events after the newline as stored events of that stream', () => {
    const payload =
      'conversation-1\n' +
      JSON.stringify([
        {
          position: '42',
          event_id: 'e1',
          version: 3,
          type: 'ConversationRenamed',
          data: { title: 't' },
          metadata: {},
          transaction_id: '900',
          occurred_at: Date.UTC(2026, 10, 26, 18, 0, 0, 123),
        },
      ]);
    expect(parseAnnouncement(payload).events).toEqual([
      {
        id: 'e1',
        streamId: 'conversation-1',
        version: 3,
        position: '42',
        transactionId: '900',
        type: 'ConversationRenamed',
        data: { title: 't' },
        metadata: {},
        occurredAt: new Date('2026-11-26T18:00:00.123Z'),
      },
    ]);
  });
});
