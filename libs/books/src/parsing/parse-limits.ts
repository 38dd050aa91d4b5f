import type { BookLimits } from '@parley/config';

/**
 * The bounds one parse runs under: the parser's part of BookLimits. The parser process imports
 * this file, so it imports nothing at run time (the config's schema, zod and Nest would cost a
 * parse a few hundred ms of module loading before it starts); the defaults are in book-ingest.ts.
 */
export type ParseLimits = Pick<
  BookLimits,
  'maxExpansionRatio' | 'maxExpandedBytes' | 'maxPages' | 'parseHeapMb' | 'parseMaxRssMb' | 'parseTimeoutMs'
>;

/** How many bytes an upload may expand to: a ratio of its size, capped (whichever is lower). */
export function expansionBound(uploadBytes: number, limits: ParseLimits): number {
  return Math.min(uploadBytes * limits.maxExpansionRatio, limits.maxExpandedBytes);
}
