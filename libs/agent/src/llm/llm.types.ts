import { Usage } from '@parley/conversation';
import { roundUsd } from './price-table';

/**
 * The provider-neutral LLM port. Adapters: Anthropic and Chat Completions (official SDKs), and the
 * offline scripted one; the provider router serves several at once.
 */
export type LlmTextBlock = {
  type: 'text';
  text: string;
  /** in a model's answer: the passages of the documents it sent that this text cites */
  citations?: LlmCitation[];
};
/**
 * A document the model may cite, one text block per passage (the Messages API's custom content
 * document with citations enabled). `cacheBreakpoint`: the prompt cache keeps the prompt up to
 * here (written for `cacheTtl`, the provider's default otherwise).
 */
export type LlmDocumentBlock = {
  type: 'document';
  title: string;
  /** told to the model, not citable: where the document sits (a chapter's heading) */
  context?: string;
  passages: string[];
  cacheBreakpoint?: boolean;
  cacheTtl?: '5m' | '1h';
};
/**
 * What an answer cites: passages [startBlock, endBlock) of the request's document number
 * `documentIndex` (counted over all documents of the request, in order), or for a plain text
 * document characters [startChar, endChar); `citedText` is the text cited.
 */
export type LlmCitation =
  | { type: 'block'; documentIndex: number; startBlock: number; endBlock: number; citedText: string }
  | { type: 'char'; documentIndex: number; startChar: number; endChar: number; citedText: string };
export type LlmToolUseBlock = { type: 'tool_use'; id: string; name: string; input: unknown };
export type LlmToolResultBlock = { type: 'tool_result'; toolUseId: string; content: string; isError: boolean };

export type LlmMessage =
  | { role: 'user'; content: Array<LlmTextBlock | LlmToolResultBlock | LlmDocumentBlock> }
  | { role: 'assistant'; content: Array<LlmTextBlock | LlmToolUseBlock> };

export interface LlmToolSpec {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
}

export interface ChatOptions {
  system: string;
  /**
   * the reader's part of the system prompt (reading position, instructions), sent after `system`
   * and outside its cache breakpoint, so every reader of a book shares the cached `system`;
   * an adapter without system blocks appends it to `system`
   */
  systemTail?: string;
  /** the model of this call, when not the client's configured one (a conversation's policy) */
  model?: string;
  /** index of the last message of the stable prefix (earlier turns), for a cache breakpoint */
  prefixEnd?: number;
  /** 'none' keeps the tools (and their cache) but forbids calling them: the forced final answer */
  toolChoice?: 'auto' | 'none';
  maxTokens?: number;
  signal?: AbortSignal;
  /** attempt: 1, then 2, … when a stream broken off midway (overloaded) is requested again */
  onTextDelta?: (text: string, attempt?: number) => void;
  /**
   * Through the provider's Message Batches API instead (no streaming): the call is submitted
   * once (`submitted`), then its batch is looked at (`pending`) until the answer is in.
   */
  viaBatch?: {
    /** the call's id within the batch: a step key (letters, digits, `_` and `-` are kept) */
    callId: string;
    /** the provider's batch already holding this call (recorded by an earlier attempt) */
    providerBatchId?: string;
  };
}

export interface ChatResult {
  content: Array<LlmTextBlock | LlmToolUseBlock>;
  stopReason: string;
  usage: Usage;
  model: string;
  /** the model the provider says answered, when not the id asked for (which prices the call) */
  responseModel?: string;
  /** answered through the Message Batches API (priced at half) */
  batched?: boolean;
  /** earlier attempts of this call broken off midway (then asked again): billed all the same */
  stoppedAttempts?: StoppedAttempt[];
}

/**
 * What a model call came to: its answer; or, through the Message Batches API (viaBatch), put into
 * a provider batch (record where, then come back for the answer), or still waiting in that batch.
 * What went wrong (an LlmError, an abort) is thrown.
 */
export type ChatOutcome =
  | { kind: 'answered'; result: ChatResult }
  | { kind: 'submitted'; providerBatchId: string }
  | { kind: 'pending'; providerBatchId: string; status: string };

/** The text blocks the model wrote, in order. */
export const textsOf = (r: ChatResult): string[] => r.content.flatMap((b) => (b.type === 'text' ? [b.text] : []));

/** The answer of a call made without viaBatch: only a call sent through a provider batch waits in one. */
export function answerOf(outcome: ChatOutcome): ChatResult {
  if (outcome.kind === 'answered') return outcome.result;
  throw new Error(
    `a model call without viaBatch came back ${outcome.kind} in provider batch ${outcome.providerBatchId}`,
  );
}

/** A request an adapter sent once, not streamed (its `complete`): the provider's id of it, and its answer. */
export type Completion = Extract<ChatOutcome, { kind: 'answered' }> & {
  /** the provider's id of the message (`msg_…`, `chatcmpl-…`) */
  messageId: string;
};

/** A streamed attempt of a model call that stopped before its end, and what the provider billed for it. */
export interface StoppedAttempt {
  /** the provider's id of the message (`msg_…`): names the attempt */
  messageId: string;
  model: string;
  usage: Usage;
  /** 'aborted': by the caller's signal; 'broken': the stream failed midway */
  cause: 'aborted' | 'broken';
  /** the provider stopped before it sent the usage: counted from the request and the text streamed */
  estimated?: true;
}

/** The billed attempts an error of chatWithTools carries (none for a call that was never billed). */
export const stoppedAttemptsOf = (e: unknown): StoppedAttempt[] =>
  (e as { stoppedAttempts?: StoppedAttempt[] } | undefined)?.stoppedAttempts ?? [];

/** `e`, carrying `attempts` (kept on the error so what was billed is not lost with the call). */
export function withStoppedAttempts<E extends Error>(e: E, attempts: StoppedAttempt[]): E {
  return attempts.length ? Object.assign(e, { stoppedAttempts: attempts }) : e;
}

export interface LlmClient {
  /** What `model` can do here (undefined: the client's configured model), as its provider serves it. */
  capabilitiesOf(model: string | undefined): ModelCapabilities;
  /**
   * true only where every model the client serves surely takes tools; otherwise some conversation
   * may run without them, and their histories are kept rendered without tools too
   */
  readonly everyModelTakesTools: boolean;
  chatWithTools(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatOutcome>;
}

/** What one model can do, as the client serving it says: the one answer per model (a router serves several providers). */
export interface ModelCapabilities {
  /** the provider the model's calls go to */
  provider: string;
  /** false for a model without tool use: its turns always retrieve first */
  tools: boolean;
  /** whether user messages may hold document blocks the model cites (whole-book retrieval) */
  documents: DocumentSupport | false;
  /** whether ChatOptions.viaBatch works (the provider has a batch API) */
  batches: boolean;
}

/**
 * Document blocks (whole-book retrieval): `cached` where the provider's prompt cache makes sending
 * the book again with every turn cheap, so `auto` may choose it; `uncached` where a conversation
 * gets it only by asking (`whole-book`).
 */
export type DocumentSupport = 'cached' | 'uncached';

/** How long a provider's client waits for a request unless told otherwise (ProviderClientOptions.timeoutMs). */
export const DEFAULT_TIMEOUT_MS = 120_000;

/** What a provider's client is made with (LLM_* and the provider's own key and URL). */
export interface ProviderClientOptions {
  model: string;
  maxTokens: number;
  maxRetries: number;
  apiKey?: string;
  baseUrl?: string;
  /** each request's timeout; unset: DEFAULT_TIMEOUT_MS */
  timeoutMs?: number;
  /** prompts and answers on the `chat` spans (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) */
  captureContent?: boolean;
}

/**
 * An LLM failure, classified so the turn can say whether trying again may help. Its `message` is
 * what readers see (TurnFailed.message, webhooks, MCP clients): Parley's own words. What the
 * provider said, which a self-hosted server may fill with internal detail, is `providerDetail`,
 * for the log only.
 */
export class LlmError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly retryable: boolean,
    /** the stream broke off after a 200 (the SDK does not retry those) */
    readonly midStream = false,
    /** the provider's own text, never shown to readers */
    readonly providerDetail?: string,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

/**
 * A failure the provider reported, in Parley's words for the reader (by its code), the provider's
 * text kept aside for the log.
 */
export function providerFailure(providerText: string, code: string, retryable: boolean, midStream = false): LlmError {
  return new LlmError(readerMessageOf(code, retryable), code, retryable, midStream, providerText);
}

/** What a reader is told of a provider's failure: what happened in general terms, and whether to try again. */
export function readerMessageOf(code: string, retryable: boolean): string {
  const again = retryable ? ' Try again in a moment.' : '';
  if (code === 'llm_unreachable') return `The model's provider could not be reached.${again}`;
  if (code === 'llm_overloaded') return `The model's provider is overloaded.${again}`;
  if (code === 'llm_rate_limited') return `The model's provider is limiting requests.${again}`;
  if (code === 'llm_timeout') return `The model's provider took too long to answer.${again}`;
  if (code.startsWith('llm_stream')) return `The model's answer broke off.${again}`;
  if (code.startsWith('llm_batch')) return `The provider's batch could not answer this question.${again}`;
  if (code === 'llm_http_401' || code === 'llm_http_403')
    return "The server's credentials for the model's provider were refused; the operator has been told.";
  if (code === 'llm_tools_unsupported') return 'The model does not take tools.';
  if (code === 'llm_http_404') return "The model's provider does not know the model or the address configured.";
  if (code.startsWith('llm_http_4')) return `The model's provider refused the request.${again}`;
  return `The model's provider failed.${again}`;
}

/**
 * A model call refused before it was made because its worst case does not fit what is left of the
 * payer's budget once the calls in flight are set aside: `budget_exceeded` too, not retryable.
 */
export function callOverBudget(s: {
  limitUsd: number;
  spentUsd: number;
  reservedUsd: number;
  callUsd: number;
  month: { end: Date };
  /** the tenant whose cap (all its readers together) it would exceed; else the reader's own budget */
  tenant?: string;
}): LlmError {
  const budget = s.tenant === undefined ? "this month's budget" : "this month's budget of the reader's tenant";
  return new LlmError(
    `this call may cost up to $${roundUsd(s.callUsd)}, more than is left of ${budget} of $${s.limitUsd} ` +
      `($${roundUsd(s.spentUsd)} spent, $${roundUsd(s.reservedUsd)} set aside for calls in flight); ` +
      `it resets at ${s.month.end.toISOString()}`,
    'budget_exceeded',
    false,
  );
}

export const LLM_CLIENT = 'LLM_CLIENT';

export const zeroUsage = (): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
});
export const addUsage = (a: Usage, b: Usage): Usage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
  cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
});
