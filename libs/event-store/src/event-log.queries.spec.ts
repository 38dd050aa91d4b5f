import { EventLogQueries, streamHasEventSql } from './event-log.queries';

describe(EventLogQueries.name, () => {
  const sent: string[] = [];
  const sut = new EventLogQueries({
    query: (async (sql: string) => {
      sent.push(sql);
      return { rows: [] };
    }) as never,
  });

  it('writes the types and fields it is given into the statement, for the indexes, and binds the values', async () => {
    await sut.streamsWith('ConversationStarted', 'ownerId', "o'wner");
    expect(sent.pop()).toContain(`type = 'ConversationStarted' AND data ->> 'ownerId' = $1`);
  });

  it('refuses a type or field that is not a plain name, before any statement', async () => {
    await expect(sut.streamsWith("X' OR true --", 'ownerId', 'o')).rejects.toThrow('not a plain name');
    await expect(sut.streamsWithType('a b', 1)).rejects.toThrow('not a plain name');
    expect(() => streamHasEventSql('s.id', { types: ['Erased'], field: 'subject', equals: "x'" })).toThrow(
      'not a plain name',
    );
    expect(sent).toEqual([]);
  });

  it('names the partial index’s wider set of types first, then the ones asked for', () => {
    expect(streamHasEventSql('s.id', { indexed: ['A', 'B'], types: ['B'] }).replace(/\s+/g, ' ')).toBe(
      `EXISTS (SELECT 1 FROM events x WHERE x.stream_id = s.id AND x.type IN ('A', 'B') AND x.type = 'B')`,
    );
  });
});
