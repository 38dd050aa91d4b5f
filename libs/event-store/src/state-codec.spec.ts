import { decodeState, encodeState } from './state-codec';

describe('state codec', () => {
  it('brings Dates and Maps back, however deep, and leaves plain data as it was', () => {
    const state = {
      postedAt: new Date('2026-11-26T10:00:00.123Z'),
      turns: [{ results: new Map([['toolu_1', { content: 'x', at: new Date(0) }]]), ended: null }],
      plain: { one: 1 },
      list: [1, 'two', { three: [3] }],
    };
    const back = decodeState<typeof state>(encodeState(state));
    expect(back).toEqual(state);
    expect(back.postedAt).toBeInstanceOf(Date);
    expect(back.turns[0].results).toBeInstanceOf(Map);
    expect(back.turns[0].results.get('toolu_1')!.at).toBeInstanceOf(Date);
  });

  it('refuses a Set rather than keep it as an empty object', () => {
    expect(() => encodeState({ ids: new Set(['a']) })).toThrow(/Set/);
  });
});
