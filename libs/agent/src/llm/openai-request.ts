import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { ChatOptions, LlmMessage, LlmToolSpec } from './llm.types';

/** A tool result the tool failed on: Chat Completions has no is_error, so the content says it. */
export const TOOL_ERROR_PREFIX = 'Error: ';

/**
 * A call as a Chat Completions request: the system prompt first, each assistant tool call as a
 * `tool_calls` entry answered by a `role: "tool"` message right after it (results before the
 * user's text, as the Anthropic request has them), streamed with the usage in its last chunk.
 * Nothing varies between calls but what was added at the end, so OpenAI's automatic prompt cache
 * reads the prefix (it needs no breakpoints).
 */
export function chatCompletionRequest(
  messages: LlmMessage[],
  tools: LlmToolSpec[],
  options: ChatOptions,
  model: string,
  maxTokens: number,
): ChatCompletionCreateParamsStreaming {
  return {
    model,
    // max_tokens is refused by OpenAI's reasoning models; compatible servers take both or ignore it
    max_completion_tokens: options.maxTokens ?? maxTokens,
    messages: [
      // the reader's part of the system prompt after the book's (Chat Completions caches a common prefix by itself)
      { role: 'system', content: options.systemTail ? `${options.system}\n\n${options.systemTail}` : options.system },
      ...messages.flatMap(toMessages),
    ],
    ...(tools.length ? { tools: tools.map(toTool), tool_choice: options.toolChoice ?? 'auto' } : {}),
    stream: true,
    stream_options: { include_usage: true },
  };
}

function toTool(t: LlmToolSpec): ChatCompletionTool {
  return { type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } };
}

function toMessages(m: LlmMessage): ChatCompletionMessageParam[] {
  if (m.role === 'assistant') {
    const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    const calls: ChatCompletionMessageToolCall[] = m.content.flatMap((b) =>
      b.type === 'tool_use'
        ? [{ id: b.id, type: 'function' as const, function: { name: b.name, arguments: JSON.stringify(b.input) } }]
        : [],
    );
    return [
      {
        role: 'assistant',
        content: text || (calls.length ? null : ''),
        ...(calls.length ? { tool_calls: calls } : {}),
      },
    ];
  }
  const results: ChatCompletionMessageParam[] = m.content.flatMap((b) =>
    b.type === 'tool_result'
      ? [
          {
            role: 'tool' as const,
            tool_call_id: b.toolUseId,
            content: (b.isError ? TOOL_ERROR_PREFIX : '') + b.content,
          },
        ]
      : [],
  );
  // one string: every compatible server takes that, not all take an array of parts
  const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : []));
  return text.length ? [...results, { role: 'user', content: text.join('\n\n') }] : results;
}
