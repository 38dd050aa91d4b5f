import { ChatOptions, LlmMessage, LlmToolSpec } from './llm.types';
import { PriceTable } from './price-table';

/**
 * Characters per token for text in the Latin script, on the low side (English runs near 4), so
 * a prompt is estimated high rather than low; any other character counts as a token of its own.
 */
const ASCII_CHARS_PER_TOKEN = 3;
/** What a block, a message and the request carry besides their text (roles, types, cache marks). */
const BLOCK_TOKENS = 16;
const REQUEST_TOKENS = 16;
/** The provider's own instructions for tool use, added to the prompt when tools are offered. */
const TOOL_USE_TOKENS = 400;

/** A model call about to be made: what it sends, and the most it may write. */
export interface CallRequest {
  model: string;
  messages: LlmMessage[];
  tools: LlmToolSpec[];
  options: Pick<ChatOptions, 'system' | 'systemTail'>;
  maxTokens: number;
}

/** Tokens of a text, estimated high: ASCII at 3 characters a token, anything else a token each. */
export function textTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  for (const ch of text) {
    if (ch.charCodeAt(0) < 128) ascii++;
    else other++;
  }
  return Math.ceil(ascii / ASCII_CHARS_PER_TOKEN) + other;
}

/** The request's input tokens, estimated high: system, tools, messages and documents, each block with its overhead. */
export function estimateInputTokens({ messages, tools, options }: Pick<CallRequest, 'messages' | 'tools' | 'options'>) {
  let tokens = REQUEST_TOKENS + textTokens(options.system) + textTokens(options.systemTail ?? '') + 2 * BLOCK_TOKENS;
  if (tools.length) tokens += TOOL_USE_TOKENS;
  for (const t of tools) tokens += BLOCK_TOKENS + textTokens(JSON.stringify(t));
  for (const m of messages) {
    tokens += BLOCK_TOKENS;
    for (const b of m.content) {
      tokens += BLOCK_TOKENS;
      if (b.type === 'text') tokens += textTokens(b.text);
      else if (b.type === 'tool_use') tokens += textTokens(b.name + JSON.stringify(b.input));
      else if (b.type === 'tool_result') tokens += textTokens(b.content);
      else
        tokens +=
          textTokens(b.title + (b.context ?? '')) + b.passages.reduce((n, p) => n + BLOCK_TOKENS + textTokens(p), 0);
    }
  }
  return tokens;
}

/**
 * The most a call may cost, as the ledger will price it: every input token at the dearer of the
 * input and cache-write prices (a request with cache breakpoints may write all it sends), and
 * max_tokens of output, at `prices`. A model without a price costs 0, as its calls do in the ledger.
 */
export function worstCaseUsd(request: CallRequest, prices: PriceTable): number {
  const { costUsd } = prices;
  const input = estimateInputTokens(request);
  const none = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
  const asInput = costUsd(request.model, { ...none, inputTokens: input });
  const asCacheWrite = costUsd(request.model, { ...none, cacheCreationInputTokens: input });
  const output = costUsd(request.model, { ...none, outputTokens: request.maxTokens });
  return Math.max(asInput, asCacheWrite) + output;
}
