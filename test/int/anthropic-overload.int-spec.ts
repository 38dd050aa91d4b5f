import { AnthropicLlm, answerOf, LlmError, LlmMessage } from '@parley/agent';
import { FakeAnthropic } from '../support/fake-anthropic/fake-anthropic.server';

/** The real SDK against the fake Messages API, breaking a stream off midway as an overloaded API does. */
describe('AnthropicLlm: a stream broken off after its 200', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await FakeAnthropic.start();
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const llm = (maxRetries: number) =>
    new AnthropicLlm({ model: 'claude-sonnet-5-5', maxTokens: 256, maxRetries, apiKey: 'sk-fake', baseUrl: fake.url });
  const question: LlmMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'Who sat on the mushroom?' }] }];
  const answer = 'The Caterpillar, smoking a long hookah, sat on top of the mushroom.';

  it('is classified as overloaded and asked again, the deltas of each attempt marked as such', async () => {
    fake.enqueue(
      { content: [{ type: 'text', text: answer }], breakOff: { afterDeltas: 2, type: 'overloaded_error' } },
      { content: [{ type: 'text', text: answer }] },
    );
    const deltas: Array<[number, string]> = [];
    const result = answerOf(
      await llm(2).chatWithTools(question, [], {
        system: 'sys',
        onTextDelta: (text, attempt) => deltas.push([attempt ?? 1, text]),
      }),
    );
    expect(result.content).toEqual([{ type: 'text', text: answer }]);
    expect(fake.requests).toHaveLength(2);
    expect(deltas.filter(([a]) => a === 1)).toHaveLength(2);
    expect(
      deltas
        .filter(([a]) => a === 2)
        .map(([, t]) => t)
        .join(''),
    ).toBe(answer);
  });

  it('fails as retryable llm_overloaded, not llm_http_0, once the retries are spent', async () => {
    fake.enqueue({ content: [{ type: 'text', text: answer }], breakOff: { afterDeltas: 1, type: 'overloaded_error' } });
    const error = await llm(0)
      .chatWithTools(question, [], { system: 'sys' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ code: 'llm_overloaded', retryable: true });
    // readers are told in Parley's words; what the provider said is kept for the log only
    expect((error as LlmError).message).toBe("The model's provider is overloaded. Try again in a moment.");
    expect((error as LlmError).providerDetail).toMatch(/overloaded/i);
    expect((error as LlmError).providerDetail).not.toBe((error as LlmError).message);
  });
});
