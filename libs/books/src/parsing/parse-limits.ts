import { BookLimits, loadBookLimits } from '@parley/config';

/** The bounds one parse runs under: the parser's part of BookLimits. */
export type ParseLimits = Pick<
  BookLimits,
  'maxExpansionRatio' | 'maxExpandedBytes' | 'maxPages' | 'parseHeapMb' | 'parseMaxRssMb' | 'parseTimeoutMs'
>;

/** The defaults of the config schema (one source of them), for callers without a config: tests, benchmarks. */
export const DEFAULT_PARSE_LIMITS: ParseLimits = loadBookLimits({});

/** How many bytes an upload may expand to: a ratio of its size, capped (whichever is lower). */
export function expansionBound(uploadBytes: number, limits: ParseLimits): number {
  return Math.min(uploadBytes * limits.maxExpansionRatio, limits.maxExpandedBytes);
}
