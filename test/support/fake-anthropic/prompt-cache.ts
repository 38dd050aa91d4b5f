/**
 * A simulated prompt cache, so tests can check that the product places its cache_control
 * breakpoints where a later request reuses them. Like the real API it hashes the prompt
 * prefix (tools → system → messages) up to each breakpoint, looks back up to 20 blocks
 * before each breakpoint for an entry written earlier, and counts ≈ chars/4 as tokens.
 */
import { createHash } from 'node:crypto';
import { asBlocks } from './validate-request';

export interface CacheUsage {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  /** of cache_creation_input_tokens, those written for an hour (the rest for 5 minutes) */
  cache_creation_1h_input_tokens?: number;
}

interface Segment {
  json: string;
  breakpoint: boolean;
  /** the breakpoint's entry lives an hour (`ttl: '1h'`), else 5 minutes */
  hour?: boolean;
}

const LOOKBACK_BLOCKS = 20;

export const estimateTokens = (chars: number): number => Math.ceil(chars / 4);

export class PromptCache {
  private readonly entries = new Set<string>();

  constructor(private readonly minCacheableTokens = 0) {}

  /** Usage of `body` against what was cached before; then caches its breakpoint prefixes. */
  account(body: any): CacheUsage {
    const segments = promptSegments(body);
    const hash = createHash('sha256').update(String(body.model)); // caches are per model
    const keys: string[] = [];
    const tokensUpTo: number[] = [];
    let chars = 0;
    for (const s of segments) {
      hash.update(s.json);
      chars += s.json.length;
      keys.push(hash.copy().digest('hex'));
      tokensUpTo.push(estimateTokens(chars));
    }
    const breakpoints = segments.flatMap((s, i) =>
      s.breakpoint && tokensUpTo[i] >= this.minCacheableTokens ? [i] : [],
    );

    let hit = -1; // last block index of the longest cached prefix found
    for (const b of breakpoints) {
      for (let p = b; p > Math.max(hit, b - LOOKBACK_BLOCKS); p--) {
        if (this.entries.has(keys[p])) {
          hit = p;
          break;
        }
      }
    }
    for (const b of breakpoints) this.entries.add(keys[b]);

    const read = hit < 0 ? 0 : tokensUpTo[hit];
    const lastBreakpoint = breakpoints[breakpoints.length - 1];
    const cached = Math.max(read, lastBreakpoint === undefined ? 0 : tokensUpTo[lastBreakpoint]);
    // what is written up to each breakpoint past the part read lives as long as that breakpoint says
    let covered = read;
    let hour = 0;
    for (const b of breakpoints) {
      if (tokensUpTo[b] <= covered) continue;
      if (segments[b].hour) hour += tokensUpTo[b] - covered;
      covered = tokensUpTo[b];
    }
    return {
      cache_read_input_tokens: read,
      cache_creation_input_tokens: cached - read,
      ...(hour ? { cache_creation_1h_input_tokens: hour } : {}),
      input_tokens: Math.max(1, estimateTokens(chars) - cached),
    };
  }

  clear(): void {
    this.entries.clear();
  }
}

/** The prompt as a flat list of blocks in cache order, each marked if it ends a cached prefix. */
export function promptSegments(body: any): Segment[] {
  const segments: Segment[] = [];
  const push = (kind: string, block: any) =>
    segments.push({
      json: canonicalJson({ kind, block }),
      breakpoint: hasCacheControl(block),
      hour: block?.cache_control?.ttl === '1h',
    });
  for (const tool of body.tools ?? []) push('tool', tool);
  for (const block of asBlocks(body.system)) push('system', block);
  for (const m of body.messages ?? []) for (const block of asBlocks(m.content)) push(m.role, block);
  // Top-level cache_control marks the last cacheable block.
  if (body.cache_control && segments.length > 0) segments[segments.length - 1].breakpoint = true;
  return segments;
}

function hasCacheControl(block: any): boolean {
  return Boolean(block?.cache_control) || asBlocks(block?.content).some(hasCacheControl);
}

/** Sorted keys and no cache_control, so moving a breakpoint does not change the prefix. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (key, v) => {
    if (key === 'cache_control') return undefined;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, v[k]]),
      );
    }
    return v;
  });
}
