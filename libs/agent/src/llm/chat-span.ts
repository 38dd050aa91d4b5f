import { Attributes } from '@opentelemetry/api';
import { ChatResult, LlmMessage } from './llm.types';

/**
 * The attributes of a model call's `chat` span, after the OpenTelemetry GenAI semantic
 * conventions. No prompt or answer text unless content capture is on: both hold what readers
 * wrote and what their books say.
 */

/**
 * The request attributes of a call to any provider: `gen_ai.provider.name` the provider's own,
 * `system` its instructions as the request sends them (one or several blocks).
 */
export function providerRequestAttributes(
  request: { provider: string; model: string; maxTokens: number; system: string | string[] },
  messages: LlmMessage[],
  opts: { baseUrl: string; captureContent: boolean },
): Attributes {
  const server = safeUrl(opts.baseUrl);
  return {
    'gen_ai.operation.name': 'chat',
    // gen_ai.system is the older name of gen_ai.provider.name: backends read one or the other
    'gen_ai.system': request.provider,
    'gen_ai.provider.name': request.provider,
    'gen_ai.request.model': request.model,
    'gen_ai.request.max_tokens': request.maxTokens,
    ...(server
      ? { 'server.address': server.hostname, 'server.port': Number(server.port || defaultPort(server.protocol)) }
      : {}),
    ...(opts.captureContent
      ? {
          'gen_ai.system_instructions': JSON.stringify(
            [request.system].flat().map((content) => ({ type: 'text', content })),
          ),
          'gen_ai.input.messages': JSON.stringify(messages.map(inputMessage)),
        }
      : {}),
  };
}

export function chatResultAttributes(result: ChatResult, captureContent: boolean): Attributes {
  const cacheRead = result.usage.cacheReadInputTokens;
  const cacheWrite = result.usage.cacheCreationInputTokens;
  return {
    'gen_ai.response.model': result.responseModel ?? result.model,
    'gen_ai.response.finish_reasons': [result.stopReason],
    // as Anthropic counts them: input_tokens leaves out the tokens read from and written to the cache
    'gen_ai.usage.input_tokens': result.usage.inputTokens,
    'gen_ai.usage.output_tokens': result.usage.outputTokens,
    'gen_ai.usage.cache_read_input_tokens': cacheRead,
    'gen_ai.usage.cache_creation_input_tokens': cacheWrite,
    // the names of the current semantic conventions, which the Anthropic SDK's own spans use
    'gen_ai.usage.cache_read.input_tokens': cacheRead,
    'gen_ai.usage.cache_creation.input_tokens': cacheWrite,
    ...(result.batched ? { 'parley.llm.batched': true } : {}),
    ...(result.stoppedAttempts?.length ? { 'parley.llm.stopped_attempts': result.stoppedAttempts.length } : {}),
    ...(captureContent ? { 'gen_ai.output.messages': JSON.stringify([outputMessage(result)]) } : {}),
  };
}

function inputMessage(m: LlmMessage) {
  return {
    role: m.role,
    parts: m.content.map((b) =>
      b.type === 'text'
        ? { type: 'text', content: b.text }
        : b.type === 'tool_use'
          ? { type: 'tool_call', id: b.id, name: b.name, arguments: b.input }
          : b.type === 'document'
            ? // a whole book on every span would swamp the trace backend: its title and size say enough
              { type: 'document', title: b.title, passages: b.passages.length }
            : { type: 'tool_call_response', id: b.toolUseId, response: b.content },
    ),
  };
}

function outputMessage(r: ChatResult) {
  return {
    role: 'assistant',
    parts: r.content.map((b) =>
      b.type === 'text'
        ? { type: 'text', content: b.text }
        : { type: 'tool_call', id: b.id, name: b.name, arguments: b.input },
    ),
    finish_reason: r.stopReason,
  };
}

function safeUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

const defaultPort = (protocol: string): number => (protocol === 'http:' ? 80 : 443);
