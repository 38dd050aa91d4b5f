/** Shapes used by both the fake Anthropic server and its helpers. */

import type { FakeCite } from './documents';

export type { FakeCite } from './documents';

/**
 * A reply block. A text block may cite the request's documents: `cite` points at them (the fake
 * makes the citation the API would, `content_block_location` or `char_location`, with the text
 * pointed at); `citations` are sent as given (for a reply the real API would never make).
 */
export type FakeBlock =
  | { type: 'text'; text: string; cite?: FakeCite[]; citations?: unknown[] }
  | { type: 'tool_use'; id?: string; name: string; input: unknown };

export interface FakeUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** One scripted model response. */
export interface FakeReply {
  content: FakeBlock[];
  /** Default: `tool_use` if any tool_use block, else `end_turn`. */
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens';
  /** Overrides the simulated counts field by field. */
  usage?: Partial<FakeUsage>;
  /** Pause between streamed deltas, for cancel tests. */
  delayMsPerChunk?: number;
  /**
   * Breaks the stream off after `afterDeltas` content deltas with an `error` event, as the real
   * API does when it is overloaded midway (HTTP status 200 already sent). Streaming requests only.
   */
  breakOff?: { afterDeltas: number; type: 'overloaded_error' | 'api_error'; message?: string };
}

export interface FakeError {
  error: { status: number; type: string; message: string };
}

export type FakeStep = FakeReply | FakeError | ((req: RecordedRequest) => FakeReply | FakeError);

export interface RecordedRequest {
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body (undefined when it did not parse). */
  body: any;
  rawBody: string;
  /** Date.now() when the request was received. */
  at: number;
  /** Set when the client went away before the streamed reply was complete. */
  aborted?: boolean;
  /** Set on a request that came in a Message Batch (answered when the batch ended). */
  batchId?: string;
  /** The input counts it was answered with (the prompt-cache simulation's reads and writes). */
  usage?: Omit<FakeUsage, 'output_tokens'>;
}

export interface RejectedRequest {
  req: RecordedRequest;
  status: number;
  message: string;
}

export interface FakeAnthropicOptions {
  /** Answers when the script is empty; the built-in default is used otherwise. */
  defaultResponder?: (req: RecordedRequest) => FakeReply | FakeError;
  /** Prefixes shorter than this are never cached (the real minimum is ~1024 tokens); default 0. */
  minCacheableTokens?: number;
  /**
   * Off: no prompt-cache accounting (every input token counted as uncached). It hashes every
   * block of every request, which a load test on a small machine cannot spare; default on.
   */
  simulatePromptCache?: boolean;
  /** Message Batches end this long after they are created; default 0 */
  batchProcessingMs?: number;
  /** Message Batches stay in progress until endBatches() is called */
  holdBatches?: boolean;
}

export function isFakeError(x: FakeReply | FakeError): x is FakeError {
  return 'error' in x;
}
