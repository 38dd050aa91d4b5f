import { SearchHit } from '../book.types';
import { fuseRankings, RRF_K } from './hybrid-search';

const hit = (id: string, score = 0.5): SearchHit => ({
  chunkId: id,
  chapter: 'c',
  chapterIndex: 1,
  section: null,
  page: null,
  text: id,
  score,
});

describe('fuseRankings', () => {
  it('ranks by the sum of 1/(k + rank) over both lists, scaled to 0..1', () => {
    const fused = fuseRankings([hit('a'), hit('b'), hit('c')], [hit('b'), hit('d'), hit('a')], 10);
    expect(fused.map((h) => h.chunkId)).toEqual(['b', 'a', 'd', 'c']);
    const best = 2 / (RRF_K + 1);
    expect(fused[0].score).toBeCloseTo((1 / (RRF_K + 2) + 1 / (RRF_K + 1)) / best, 4);
    expect(fused.every((h) => h.score > 0 && h.score <= 1)).toBe(true);
  });

  it('gives 1 to a passage first in both lists, keeps the full-text order on ties, and cuts at the limit', () => {
    expect(fuseRankings([hit('a')], [hit('a')], 5)[0].score).toBe(1);
    expect(fuseRankings([hit('x'), hit('y')], [hit('y'), hit('x')], 5).map((h) => h.chunkId)).toEqual(['x', 'y']);
    expect(fuseRankings([hit('a'), hit('b')], [hit('c'), hit('d')], 3)).toHaveLength(3);
    expect(fuseRankings([], [], 3)).toEqual([]);
  });
});
