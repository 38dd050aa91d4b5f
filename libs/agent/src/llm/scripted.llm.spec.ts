import { LlmMessage, LlmToolSpec } from './llm.types';
import { ScriptedLlm } from './scripted.llm';

describe(ScriptedLlm.name, () => {
  const tools: LlmToolSpec[] = [
    { name: 'search_book', description: 'search', inputSchema: { type: 'object', properties: {} } },
  ];
  const question: LlmMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'Who is the Cheshire Cat?' }] }];

  it('gives every tool call a unique id, like Anthropic’s toolu_… ids', async () => {
    const llm = new ScriptedLlm();
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const { content, stopReason } = await llm.chatWithTools(question, tools, { system: '' });
      expect(stopReason).toBe('tool_use');
      const use = content.find((b) => b.type === 'tool_use');
      expect(use?.id).toMatch(/^toolu_[0-9A-Za-z]{20,}$/);
      ids.add(use!.id);
    }
    expect(ids.size).toBe(20);
  });
});
