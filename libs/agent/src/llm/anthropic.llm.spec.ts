import { AnthropicLlm } from './anthropic.llm';
import { LlmMessage } from './llm.types';

describe(AnthropicLlm.name, () => {
  const sut = new AnthropicLlm({ model: 'claude-sonnet-5-5', maxTokens: 1024, maxRetries: 0, apiKey: 'k' });
  const tools = [
    { name: 'a_tool', description: 'a', inputSchema: { type: 'object' as const, properties: {} } },
    { name: 'search_book', description: 's', inputSchema: { type: 'object' as const, properties: {} } },
  ];
  const messages: LlmMessage[] = [
    { role: 'user', content: [{ type: 'text', text: 'q1' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'search_book', input: { query: 'q1' } }] },
    { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_1', content: 'r', isError: true }] },
    { role: 'assistant', content: [{ type: 'text', text: 'a1' }] },
    { role: 'user', content: [{ type: 'text', text: 'q2' }] },
  ];

  it('puts at most 4 cache breakpoints: last tool, system, end of the earlier turns, end of the request', () => {
    const body = sut.request(messages, tools, { system: 'sys', prefixEnd: 3 });
    const json = JSON.stringify(body);
    expect(json.match(/cache_control/g)).toHaveLength(4);
    expect(body.tools![1]).toHaveProperty('cache_control');
    expect(body.tools![0]).not.toHaveProperty('cache_control');
    expect((body.messages[3].content as object[])[0]).toHaveProperty('cache_control');
    expect((body.messages[4].content as object[])[0]).toHaveProperty('cache_control');
    expect(body.messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: 'r', is_error: true },
    ]);
  });

  it("sends the reader's system tail after the cached system block, without a breakpoint of its own", () => {
    const body = sut.request(messages, tools, { system: 'book', systemTail: 'reader', prefixEnd: 3 });
    expect(body.system).toEqual([
      { type: 'text', text: 'book', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'reader' },
    ]);
    expect(JSON.stringify(body).match(/cache_control/g)).toHaveLength(4);
    expect(sut.request(messages, tools, { system: 'book' }).system).toHaveLength(1);
  });

  it('sends no sampling parameters (API 2026-10-21) and keeps tools with tool_choice none for the final call', () => {
    const body = sut.request(messages, tools, { system: 'sys', toolChoice: 'none' }) as unknown as Record<
      string,
      unknown
    >;
    for (const removed of ['temperature', 'top_p', 'top_k']) expect(body).not.toHaveProperty(removed);
    expect(body.tool_choice).toEqual({ type: 'none' });
    expect(body.tools).toHaveLength(2);
  });

  it('omits tools and tool_choice when there are none', () => {
    const body = sut.request([messages[0]], [], { system: 'sys' });
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
  });
});
