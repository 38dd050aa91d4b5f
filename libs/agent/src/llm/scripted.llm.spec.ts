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

  it("answers the README's question from the sentence that says it, naming the Caterpillar, and cites its passage", async () => {
    const asked: LlmMessage = {
      role: 'user',
      content: [{ type: 'text', text: 'Who did Alice meet sitting on a mushroom?' }],
    };
    const searched: LlmMessage = {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'search_book', input: { query: 'mushroom' } }],
    };
    // as search_book returned them for data/books/alice.txt up to chapter 6 (shortened)
    const results = [
      '3 passages for "Who did Alice meet sitting on a mushroom?" in chapters 1–6:',
      '[1] CHAPTER IV. The Rabbit Sends in a Little Bill',
      "Oh dear! I'd nearly forgotten that I've got to grow up again! Let me see--how IS it to be managed?",
      '',
      'There was a large mushroom growing near her, about the same height as herself.',
      '',
      'She stretched herself up on tiptoe, and peeped over the edge of the mushroom, and her eyes immediately met those of a large caterpillar, that was sitting on the top with its arms folded, quietly smoking a long hookah.',
      '',
      '[2] CHAPTER V. Advice from a Caterpillar',
      'Alice remained looking thoughtfully at the mushroom for a minute, trying to make out which were the two sides of it.',
    ].join('\n');
    const answered: LlmMessage = {
      role: 'user',
      content: [{ type: 'tool_result', toolUseId: 'toolu_1', content: results, isError: false }],
    };
    const { content } = answerOf(
      await new ScriptedLlm().chatWithTools([asked, searched, answered], tools, { system: '' }),
    );
    const text = content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    expect(text).toMatch(
      /^According to the book: "She stretched herself up on tiptoe, .*a large caterpillar, that was sitting on the top.*" \[1\]$/,
    );
  });

  it('quotes the opening of the first passage when no sentence shares a word with the question', async () => {
    const asked: LlmMessage = { role: 'user', content: [{ type: 'text', text: 'Why?' }] };
    const answered: LlmMessage = {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          toolUseId: 'toolu_1',
          content: '[1] CHAPTER I\nDown the rabbit hole. She fell.',
          isError: false,
        },
      ],
    };
    const { content } = answerOf(await new ScriptedLlm().chatWithTools([asked, answered], tools, { system: '' }));
    expect(content).toEqual([{ type: 'text', text: 'According to the book: "Down the rabbit hole. She fell.…" [1]' }]);
  });
});
