import { announcementOf, parseAnnouncement } from './announcement';

describe(parseAnnouncement.name, () => {
  it('reads a stream id alone (an append in a caller’s transaction, an older release) as saying nothing more', () => {
    expect(parseAnnouncement('conversation-1')).toEqual({ streamId: 'conversation-1' });
  });

  it('reads the version an announcement of appends side by side gives, without events', () => {
    const announced = parseAnnouncement(announcementOf('conversation-1', 7));
    expect(announced).toEqual({ streamId: 'conversation-1', version: 7 });
    expect(announced.events).toBeUndefined();
  });

  it('reads the events after the version as stored events of that stream, a newline inside them too', () => {
    const payload =
      'conversation-1\n3\n' +
      JSON.stringify([
        {
          position: '42',
          event_id: 'e1',
          version: 3,
          type: 'UserMessagePosted',
          data: { content: 'two\nlines' },
          metadata: {},
          transaction_id: '900',
          occurred_at: Date.UTC(2026, 10, 26, 18, 0, 0, 123),
        },
      ]);
    const announced = parseAnnouncement(payload);
    expect(announced.version).toBe(3);
    expect(announced.events).toEqual([
      {
        id: 'e1',
        streamId: 'conversation-1',
        version: 3,
        position: '42',
        transactionId: '900',
        type: 'UserMessagePosted',
        data: { content: 'two\nlines' },
        metadata: {},
        occurredAt: new Date('2026-11-26T18:00:00.123Z'),
      },
    ]);
  });
});
