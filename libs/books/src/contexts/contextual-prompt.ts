import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import { costUsd } from '@parley/agent';
import type { Usage } from '@parley/conversation';

/*
 * Anthropic's contextual retrieval (anthropic.com/news/contextual-retrieval): for each passage
 * the model reads the book and writes a short context that situates the passage in it. The book
 * is the same long prefix in every request and carries the cache breakpoint, so it is written to
 * the prompt cache once and read from it for every other passage (at a tenth of the input price).
 */

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
          { type: 'text', text: `<passage>\n${passage}\n</passage>\n\n${CONTEXT_INSTRUCTIONS}` },
        ],
      },
    ],
  };
}

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
  /** by the pricing table (libs/agent/src/llm/pricing.ts); 0 for a model it does not know */
  usd: number;
}

/** Output tokens assumed per context (the prompt asks for one or two sentences). */
export const EXPECTED_OUTPUT_TOKENS = 60;

/**
 * What contextualising `passages` costs: the book written to the cache once, read from it by
 * every other request, each passage and the instructions as plain input, and the contexts as
 * output. Assumes every read hits the cache (requests come within its 5-minute life).
 */
export function estimateCost(
  model: string,
  prefix: { text: string; truncated: boolean },
  passages: string[],
): ContextEstimate {
  const bookTokens = tokensOf(prefix.text.length);
  const n = passages.length;
  const tokens: Usage = {
    cacheCreationInputTokens: n ? bookTokens : 0,
    cacheReadInputTokens: n > 1 ? bookTokens * (n - 1) : 0,
    inputTokens: passages.reduce((s, p) => s + tokensOf(p.length + CONTEXT_INSTRUCTIONS.length + 30), 0),
    outputTokens: n * EXPECTED_OUTPUT_TOKENS,
  };
  return { model, passages: n, bookTokens, truncated: prefix.truncated, tokens, usd: costUsd(model, tokens) };
}

/** A one-line summary for logs and the CLI. */
export function describeEstimate(e: ContextEstimate): string {
  const k = (n: number) => `${Math.round(n / 1000).toLocaleString('en')}k`;
  return (
    `${e.passages} passages with ${e.model}: book ${k(e.bookTokens)} tokens${e.truncated ? ' (cut to fit)' : ''} ` +
    `written to the cache once, ${k(e.tokens.cacheReadInputTokens)} cache reads, ${k(e.tokens.inputTokens)} input, ` +
    `~${k(e.tokens.outputTokens)} output ≈ $${e.usd.toFixed(2)}`
  );
}
