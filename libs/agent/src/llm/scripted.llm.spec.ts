import { answerOf, LlmMessage, LlmToolSpec } from './llm.types';
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
      const { content, stopReason } = answerOf(await llm.chatWithTools(question, tools, { system: '' }));
      expect(stopReason).toBe('tool_use');
      const use = content.find((b) => b.type === 'tool_use');
      expect(use?.id).toMatch(/^toolu_[0-9A-Za-z]{20,}$/);
      ids.add(use!.id);
    }
    expect(ids.size).toBe(20);
  });

  it('answers the always-retrieve helper prompts (query, HyDE passage) with the question itself', async () => {
    const prompt = `Write a passage.\n\nConversation so far:\n(none)\n\nLast question: Who gave Alice the cake?`;
    const outcome = await new ScriptedLlm().chatWithTools(
      [{ role: 'user', content: [{ type: 'text', text: `${'x'.repeat(600)}\n${prompt}` }] }],
      [],
      { system: 'You write search queries.' },
    );
    expect(outcome).toMatchObject({
      kind: 'answered',
      result: { content: [{ type: 'text', text: 'Who gave Alice the cake?' }] },
    });
  });
});
