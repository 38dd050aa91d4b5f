import { Citation } from '@parley/conversation';
import { TurnRecord } from './turn-fold';

/**
 * The passages an answer cites: every [n] (also [n, m] and [n-m]) in its text mapped to the
 * chunk numbered n by this turn's tool results, each chunk once, in order of first citation.
 */
export function citedPassages(text: string, turn: TurnRecord): Citation[] {
  const numbered = numberedPassagesOf(turn);
  const cited: Citation[] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(/\[(\d+(?:\s*[-–,]\s*\d+)*)\]/g)) {
    for (const n of expand(m[1])) {
      const c = numbered.get(n);
      if (c && !seen.has(c.chunkId)) {
        seen.add(c.chunkId);
        cited.push(c);
      }
    }
  }
  return cited;
}

/** The passages this turn's tool results numbered, by number. */
export function numberedPassagesOf(turn: TurnRecord): Map<number, Citation> {
  const numbered = new Map<number, Citation>();
  for (const it of turn.iterations) {
    for (const r of it.results.values()) r.chunks.forEach((c, i) => numbered.set(r.citationStart + i, c));
  }
  return numbered;
}

function expand(list: string): number[] {
  return list.split(',').flatMap((part) => {
    const [a, b] = part.split(/[-–]/).map((x) => Number(x.trim()));
    if (b === undefined) return [a];
    return b >= a && b - a < 50 ? Array.from({ length: b - a + 1 }, (_, i) => a + i) : [a, b];
  });
}
