import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { PriceTable } from '@parley/agent';
import type { Usage } from '@parley/conversation';

/*
 * Anthropic's contextual retrieval (anthropic.com/news/contextual-retrieval): for each passage
 * the model reads the book and writes a short context that situates the passage in it. The book
 * is the same long prefix in every request, so it is read from the prompt cache for every
 * passage but the first: on Anthropic the book carries the cache breakpoint (written to the
 * cache once, read at a tenth of the input price); on the Chat Completions API the cache is
 * automatic (a repeated prefix of 1,024 tokens or more, no write charge).
 */

/** The providers that write contexts: the model's entry in the price table says which. */
export type ContextProvider = 'anthropic' | 'openai';

/** The model's instructions, after the book; Anthropic's published prompt, worded for books. */
export const CONTEXT_INSTRUCTIONS =
  'Here is the passage we want to situate within the whole book. Give a short succinct context ' +
  '(one or two sentences: who is speaking or acting, which chapter, which events) to situate this ' +
  'passage within the book for the purposes of improving search retrieval of the passage. Answer ' +
  'only with the succinct context and nothing else.';

/** ≈ characters per token of English prose; an estimate (the API counts the real tokens). */
export const CHARS_PER_TOKEN = 4;

export const tokensOf = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

export interface BookPassage {
  chapter: string;
  text: string;
}

/**
 * The book as the cached prefix: its passages in order under their chapter titles, cut at the
 * last whole passage that fits maxTokens (a book longer than the model's window is situated
 * against its beginning only: every request must share one prefix to read the cache).
 */
export function bookPrefix(
  title: string,
  passages: BookPassage[],
  maxTokens: number,
): { text: string; truncated: boolean } {
  const maxChars = maxTokens * CHARS_PER_TOKEN;
  let text = `<book title="${title.replace(/"/g, "'")}">\n`;
  let chapter: string | null = null;
  for (const p of passages) {
    const part = (p.chapter !== chapter ? `\n## ${p.chapter}\n\n` : '') + p.text + '\n\n';
    if (text.length + part.length + 8 > maxChars) return { text: text + '</book>', truncated: true };
    text += part;
    chapter = p.chapter;
  }
  return { text: text + '</book>', truncated: false };
}

/**
 * One passage's request: the book (cache breakpoint on it), then the passage and the
 * instructions. No sampling parameters: current models reject temperature and top_p.
 */
export function contextRequest(
  model: string,
  maxTokens: number,
  prefix: string,
  passage: string,
): MessageCreateParamsNonStreaming {
  return {
    model,
    max_tokens: maxTokens,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: prefix, cache_control: { type: 'ephemeral' } },
          { type: 'text', text: passageAsk(passage) },
        ],
      },
    ],
  };
}

/** Said before the book on the Chat Completions API, where the book is the system message. */
export const CONTEXT_ROLE = 'You situate passages of the book below for a search index.';

/**
 * One passage's request on the Chat Completions API: the book first, as the system message (byte-
 * identical for every passage of the book, so OpenAI's automatic prompt cache reads it), then the
 * passage and the instructions as the user's one string (every compatible server takes that).
 * `max_completion_tokens`, which OpenAI's reasoning models require; no sampling parameters.
 */
export function chatContextRequest(
  model: string,
  maxTokens: number,
  prefix: string,
  passage: string,
): ChatCompletionCreateParamsNonStreaming {
  return {
    model,
    max_completion_tokens: maxTokens,
    messages: [
      { role: 'system', content: `${CONTEXT_ROLE}\n\n${prefix}` },
      { role: 'user', content: passageAsk(passage) },
    ],
  };
}

const passageAsk = (passage: string) => `<passage>\n${passage}\n</passage>\n\n${CONTEXT_INSTRUCTIONS}`;

/** The model's answer as a context: one line, trimmed, at most maxChars (a runaway answer is cut). */
export function cleanContext(text: string, maxChars = 600): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > maxChars ? flat.slice(0, maxChars) : flat;
}

export interface ContextEstimate {
  model: string;
  /** passages still without a context (those the run would send) */
  passages: number;
  /** tokens of the cached book prefix, and whether the book had to be cut to fit */
  bookTokens: number;
  truncated: boolean;
  tokens: Usage;
  /** by the price table (the shipped prices and LLM_PRICES); 0 for a model it does not know */
  usd: number;
}

/** Output tokens assumed per context (the prompt asks for one or two sentences). */
export const EXPECTED_OUTPUT_TOKENS = 60;

/** OpenAI caches a prompt's prefix once it is this long, in steps of OPENAI_CACHE_STEP tokens. */
export const OPENAI_MIN_CACHED_TOKENS = 1024;
export const OPENAI_CACHE_STEP = 128;

/**
 * What contextualising `passages` costs: the book read from the cache by every request but the
 * first, each passage and the instructions as plain input, and the contexts as output. On
 * Anthropic the first request writes the book to the cache (at the cache-write price); on
 * OpenAI it is plain input, and a later request reads the book's whole 128-token steps, if it has
 * 1,024 tokens at least, at the cached-input price and the rest as input. Assumes every read hits
 * the cache (requests come within its life of some minutes). Priced by `prices`.
 */
export function estimateCost(
  prices: PriceTable,
  model: string,
  prefix: { text: string; truncated: boolean },
  passages: string[],
  provider: ContextProvider = 'anthropic',
): ContextEstimate {
  const bookTokens = tokensOf(prefix.text.length);
  const n = passages.length;
  const reads = Math.max(0, n - 1);
  const asks = passages.reduce((s, p) => s + tokensOf(p.length + CONTEXT_INSTRUCTIONS.length + 30), 0);
  const cachedPerRead =
    provider === 'anthropic'
      ? bookTokens
      : bookTokens >= OPENAI_MIN_CACHED_TOKENS
        ? bookTokens - (bookTokens % OPENAI_CACHE_STEP)
        : 0;
  const tokens: Usage = {
    cacheCreationInputTokens: provider === 'anthropic' && n ? bookTokens : 0,
    cacheReadInputTokens: cachedPerRead * reads,
    inputTokens: asks + (provider === 'anthropic' ? 0 : (n ? bookTokens : 0) + (bookTokens - cachedPerRead) * reads),
    outputTokens: n * EXPECTED_OUTPUT_TOKENS,
  };
  return { model, passages: n, bookTokens, truncated: prefix.truncated, tokens, usd: prices.costUsd(model, tokens) };
}

/** A one-line summary for logs and the CLI. */
export function describeEstimate(e: ContextEstimate): string {
  const k = (n: number) => `${Math.round(n / 1000).toLocaleString('en')}k`;
  const written = e.tokens.cacheCreationInputTokens ? ' written to the cache once,' : ',';
  return (
    `${e.passages} passages with ${e.model}: book ${k(e.bookTokens)} tokens${e.truncated ? ' (cut to fit)' : ''}` +
    `${written} ${k(e.tokens.cacheReadInputTokens)} cache reads, ${k(e.tokens.inputTokens)} input, ` +
    `~${k(e.tokens.outputTokens)} output ≈ $${e.usd.toFixed(2)}`
  );
}
