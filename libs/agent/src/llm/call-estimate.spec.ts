import { estimateInputTokens, textTokens, worstCaseUsd } from './call-estimate';
import { LlmMessage } from './llm.types';
import { priceTableWith } from './pricing';

/** The shipped prices. */
const prices = priceTableWith();

const prose = 'The lamp room stood at the top of the tower, and Marisol climbed to it every night. '.repeat(50);
const ask = (text: string): LlmMessage[] => [{ role: 'user', content: [{ type: 'text', text }] }];
const request = (messages: LlmMessage[], maxTokens = 1000) => ({
  model: 'claude-sonnet-4-5',
  messages,
  tools: [],
  options: { system: 'You answer questions about books.' },
  maxTokens,
});

describe(estimateInputTokens.name, () => {
  it('counts English prose above its usual ~4 characters a token, and not absurdly so', () => {
    const tokens = textTokens(prose);
    expect(tokens).toBeGreaterThanOrEqual(prose.length / 4);
    expect(tokens).toBeLessThanOrEqual(prose.length / 2.5);
  });

  it('counts a character outside ASCII as a token of its own (CJK runs near one a token)', () => {
    expect(textTokens('灯台の部屋'.repeat(100))).toBe(500);
  });

  it('counts the documents, tool results, tool calls and tools offered, each with its overhead', () => {
    const bare = estimateInputTokens(request(ask('Who is Marisol?')));
    const withDocument = estimateInputTokens(
      request([
        {
          role: 'user',
          content: [
            { type: 'document', title: 'The Lighthouse', passages: [prose, prose] },
            { type: 'text', text: 'Who is Marisol?' },
          ],
        },
      ]),
    );
    expect(withDocument - bare).toBeGreaterThanOrEqual((2 * prose.length) / 4);
    const tool = { name: 'search_book', description: prose, inputSchema: { type: 'object' as const, properties: {} } };
    expect(estimateInputTokens({ ...request(ask('Who is Marisol?')), tools: [tool] }) - bare).toBeGreaterThan(
      prose.length / 4 + 400,
    );
    const exchange: LlmMessage[] = [
      ...ask('Who is Marisol?'),
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'search_book', input: { query: prose } }] },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content: prose, isError: false }] },
    ];
    expect(estimateInputTokens(request(exchange)) - bare).toBeGreaterThanOrEqual((2 * prose.length) / 4);
  });
});

describe(worstCaseUsd.name, () => {
  it('prices every input token at the cache-write price and max_tokens of output (claude-sonnet-4-5: 3.75 and 15 per million)', () => {
    const r = request(ask(prose), 2000);
    const input = estimateInputTokens(r);
    expect(worstCaseUsd(r, prices)).toBeCloseTo((input * 3.75 + 2000 * 15) / 1e6, 6);
  });

  it('is 0 for a model without a price, as its calls are in the ledger', () => {
    expect(worstCaseUsd({ ...request(ask(prose)), model: 'no-such-model' }, prices)).toBe(0);
  });
});
