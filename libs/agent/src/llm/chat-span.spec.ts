import { chatResultAttributes, providerRequestAttributes } from './chat-span';
import { ChatResult, LlmMessage } from './llm.types';

describe('chat span attributes', () => {
  const messages: LlmMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'Where is the lamp?' }] }];
  const request = { provider: 'anthropic', model: 'claude-sonnet-5-5', maxTokens: 512, system: ['You read books.'] };
  const result: ChatResult = {
    content: [{ type: 'text', text: 'On the shelf. [1]' }],
    stopReason: 'end_turn',
    usage: { inputTokens: 12, outputTokens: 7, cacheReadInputTokens: 100, cacheCreationInputTokens: 3 },
    model: 'claude-sonnet-5-5-20261101',
  };

  it('name the operation, the provider, the models, the tokens and the finish reason, and no content by default', () => {
    const attributes = providerRequestAttributes(request, messages, {
      baseUrl: 'https://api.anthropic.com',
      captureContent: false,
    });
    const response = chatResultAttributes(result, false);
    expect({ ...attributes, ...response }).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'anthropic',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-sonnet-5-5',
      'gen_ai.request.max_tokens': 512,
      'server.address': 'api.anthropic.com',
      'server.port': 443,
      'gen_ai.response.model': 'claude-sonnet-5-5-20261101',
      'gen_ai.response.finish_reasons': ['end_turn'],
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.usage.cache_read_input_tokens': 100,
      'gen_ai.usage.cache_creation_input_tokens': 3,
      'gen_ai.usage.cache_read.input_tokens': 100,
      'gen_ai.usage.cache_creation.input_tokens': 3,
    });
  });

  it('carry the prompt and the answer only with content capture on', () => {
    const attributes = providerRequestAttributes(request, messages, {
      baseUrl: 'http://127.0.0.1:8080',
      captureContent: true,
    });
    expect(JSON.parse(String(attributes['gen_ai.system_instructions']))).toEqual([
      { type: 'text', content: 'You read books.' },
    ]);
    expect(JSON.parse(String(attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'Where is the lamp?' }] },
    ]);
    expect(JSON.parse(String(chatResultAttributes(result, true)['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'On the shelf. [1]' }], finish_reason: 'end_turn' },
    ]);
  });
});
