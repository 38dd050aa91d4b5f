/** The bounds one parse runs under (from BookLimits in @parley/config). */
export interface ParseLimits {
  maxExpansionRatio: number;
  maxExpandedBytes: number;
  maxPages: number;
  parseHeapMb: number;
  parseMaxRssMb: number;
  parseTimeoutMs: number;
}

/** The defaults of libs/config, for callers without a config (tests, benchmarks). */
export const DEFAULT_PARSE_LIMITS: ParseLimits = {
  maxExpansionRatio: 50,
  maxExpandedBytes: 200 * 1024 * 1024,
  maxPages: 5_000,
  parseHeapMb: 512,
  parseMaxRssMb: 768,
  parseTimeoutMs: 120_000,
};

/** How many bytes an upload may expand to: a ratio of its size, capped (whichever is lower). */
export function expansionBound(uploadBytes: number, limits: ParseLimits): number {
  return Math.min(uploadBytes * limits.maxExpansionRatio, limits.maxExpandedBytes);
}
