import { forkPoints } from './conversation-forking';

describe(forkPoints.name, () => {
  it('counts a fork 1, and 1 more per 100 events it copies', () => {
    expect([0, 1, 99, 100, 199, 250].map((events) => forkPoints(events, 30))).toEqual([1, 1, 1, 2, 2, 3]);
  });

  it('counts at most the whole minute, so a long history can still be forked once a minute', () => {
    expect(forkPoints(10_000, 30)).toBe(30);
  });
});
