/**
 * Turns a scripted FakeReply into what the API sends: the Message JSON, and the
 * streaming events in the real order with text and tool input split into deltas.
 */
import { randomBytes } from 'node:crypto';
import type { CacheUsage } from './prompt-cache';
import { estimateTokens } from './prompt-cache';
import type { FakeReply } from './fake-anthropic.types';
import { citationOf, type RequestDocument } from './documents';

export type StreamEvent = { type: string } & Record<string, unknown>;

const WORDS_PER_DELTA = 3;
const JSON_CHARS_PER_DELTA = 16;

export function newId(prefix: string): string {
  return prefix + randomBytes(18).toString('base64url').replace(/[-_]/g, 'x');
}

export function renderMessage(reply: FakeReply, model: string, cache: CacheUsage, documents: RequestDocument[] = []) {
  const content = reply.content.map((b) =>
    b.type === 'text'
      ? {
          type: 'text' as const,
          text: b.text,
          ...(b.cite || b.citations
            ? { citations: [...(b.cite ?? []).map((c) => citationOf(documents, c)), ...(b.citations ?? [])] }
            : {}),
        }
      : {
          type: 'tool_use' as const,
          id: b.id ?? newId('toolu_'),
          name: b.name,
          input: b.input,
          caller: { type: 'direct' },
        },
  );
  const outputChars = content.reduce((n, b) => n + (b.type === 'text' ? b.text : JSON.stringify(b.input)).length, 0);
  // cited_text is not counted as output
  const usage = {
    input_tokens: cache.input_tokens,
    output_tokens: Math.max(1, estimateTokens(outputChars)),
    cache_creation_input_tokens: cache.cache_creation_input_tokens,
    cache_read_input_tokens: cache.cache_read_input_tokens,
    ...reply.usage,
  };
  const hour = Math.min(cache.cache_creation_1h_input_tokens ?? 0, usage.cache_creation_input_tokens);
  return {
    id: newId('msg_'),
    type: 'message' as const,
    role: 'assistant' as const,
    model,
    content,
    stop_reason: reply.stopReason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    stop_details: null,
    container: null,
    usage: {
      ...usage,
      cache_creation: {
        ephemeral_5m_input_tokens: usage.cache_creation_input_tokens - hour,
        ephemeral_1h_input_tokens: hour,
      },
      service_tier: 'standard',
    },
  };
}

export type RenderedMessage = ReturnType<typeof renderMessage>;

/** message_start, ping, per block start → deltas → stop, message_delta, message_stop. */
export function streamEvents(message: RenderedMessage): StreamEvent[] {
  const { usage } = message;
  const events: StreamEvent[] = [
    {
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    },
    { type: 'ping' },
  ];
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      const cited = 'citations' in block ? (block.citations as unknown[]) : undefined;
      // a block that cites starts with an empty list; each citation comes as a citations_delta
      const start = cited ? { type: 'text', text: '', citations: [] } : { type: 'text', text: '' };
      events.push({ type: 'content_block_start', index, content_block: start });
      for (const text of textChunks(block.text)) {
        events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
      }
      for (const citation of cited ?? []) {
        events.push({ type: 'content_block_delta', index, delta: { type: 'citations_delta', citation } });
      }
    } else {
      events.push({ type: 'content_block_start', index, content_block: { ...block, input: {} } });
      for (const partial_json of ['', ...jsonChunks(block.input)]) {
        events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
      }
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push(
    {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: null, stop_details: null, container: null },
      // Counters are cumulative totals for the whole message.
      usage: {
        output_tokens: usage.output_tokens,
        input_tokens: usage.input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
      },
    },
    { type: 'message_stop' },
  );
  return events;
}

/** A few words per delta, so consumers see several `text` events. */
export function textChunks(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g);
  if (!words || words.join('') !== text) return [text];
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += WORDS_PER_DELTA) chunks.push(words.slice(i, i + WORDS_PER_DELTA).join(''));
  return chunks;
}

function jsonChunks(input: unknown): string[] {
  const json = JSON.stringify(input ?? {});
  const chunks: string[] = [];
  for (let i = 0; i < json.length; i += JSON_CHARS_PER_DELTA) chunks.push(json.slice(i, i + JSON_CHARS_PER_DELTA));
  return chunks;
}
