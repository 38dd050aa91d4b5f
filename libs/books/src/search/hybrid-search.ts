import { SearchHit } from '../book.types';

/** Reciprocal rank fusion's constant: a passage at rank r earns 1 / (RRF_K + r) from each list. */
export const RRF_K = 60;

/** Candidates taken from each list before fusing (the lexical and the vector top-N). */
export const FUSION_CANDIDATES = 50;

/**
 * Reciprocal rank fusion of the full-text and the vector rankings: each passage earns
 * 1 / (k + rank) from every list it is in (rank from 1). Scores are divided by the best a
 * passage can earn (first in both lists), so they lie in 0..1. Both lists come filtered by the
 * reading position already; ties keep the full-text order.
 */
export function fuseRankings(lexical: SearchHit[], vector: SearchHit[], limit: number, k = RRF_K): SearchHit[] {
  const fused = new Map<string, { hit: SearchHit; score: number; order: number }>();
  const add = (list: SearchHit[], offset: number) =>
    list.forEach((hit, i) => {
      const prev = fused.get(hit.chunkId);
      const gain = 1 / (k + i + 1);
      if (prev) prev.score += gain;
      else fused.set(hit.chunkId, { hit, score: gain, order: offset + i });
    });
  add(lexical, 0);
  add(vector, lexical.length);
  const best = 2 / (k + 1);
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, limit)
    .map(({ hit, score }) => ({ ...hit, score: Math.round(Math.min(1, score / best) * 10_000) / 10_000 }));
}
