import { FakeAnthropic } from '../../../../test/support/fake-anthropic/fake-anthropic.server';
import { AnthropicLlm } from './anthropic.llm';
import { isAbort } from './provider-call';
import { answerOf, LlmError, LlmMessage, stoppedAttemptsOf } from './llm.types';

/** The real SDK over HTTP against the fake Messages API: what a stream stopped midway was billed. */
describe(`${AnthropicLlm.name}: billed usage of a stopped stream`, () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await FakeAnthropic.start();
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const sut = (maxRetries = 0) =>
    new AnthropicLlm({ model: 'claude-sonnet-5-5', maxTokens: 1024, maxRetries, apiKey: 'sk-fake', baseUrl: fake.url });
  const question: LlmMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'Who sat on the mushroom?' }] }];
  const started = { input_tokens: 1234, cache_read_input_tokens: 500, cache_creation_input_tokens: 70 };
  const long = 'word '.repeat(300);

  it("carries message_start's input and the output streamed so far on the abort error", async () => {
    fake.enqueue({ content: [{ type: 'text', text: long }], delayMsPerChunk: 10, usage: started });
    const controller = new AbortController();
    let seen = '';
    const error = await sut()
      .chatWithTools(question, [], {
        system: 'sys',
        signal: controller.signal,
        onTextDelta: (text) => {
          seen += text;
          if (seen.length >= 60) controller.abort();
        },
      })
      .catch((e: unknown) => e);
    expect(isAbort(error)).toBe(true);
    const [stopped, ...more] = stoppedAttemptsOf(error);
    expect(more).toEqual([]);
    expect(stopped).toMatchObject({
      messageId: expect.stringMatching(/^msg_/),
      model: 'claude-sonnet-5-5',
      cause: 'aborted',
      usage: { inputTokens: 1234, cacheReadInputTokens: 500, cacheCreationInputTokens: 70 },
    });
    // no message_delta came: estimated from the text streamed, far below the whole reply's
    expect(stopped.usage.outputTokens).toBeGreaterThanOrEqual(Math.ceil(seen.length / 4));
    expect(stopped.usage.outputTokens).toBeLessThan(long.length / 4);
    await fake.waitFor('the abort', () => fake.aborted === 1);
  });

  it('reports nothing for a call aborted before the API answered (nothing billed)', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await sut()
      .chatWithTools(question, [], { system: 'sys', signal: controller.signal })
      .catch((e: unknown) => e);
    expect(isAbort(error)).toBe(true);
    expect(stoppedAttemptsOf(error)).toEqual([]);
  });

  it('returns the attempt broken off midway with the answer of the attempt that followed', async () => {
    fake.enqueue(
      {
        content: [{ type: 'text', text: long }],
        usage: started,
        breakOff: { afterDeltas: 3, type: 'overloaded_error' },
      },
      { content: [{ type: 'text', text: 'The Caterpillar.' }], usage: started },
    );
    const result = answerOf(await sut(1).chatWithTools(question, [], { system: 'sys' }));
    expect(result.content).toEqual([{ type: 'text', text: 'The Caterpillar.' }]);
    expect(result.stoppedAttempts).toEqual([
      expect.objectContaining({ cause: 'broken', usage: expect.objectContaining({ inputTokens: 1234 }) }),
    ]);
    expect(result.stoppedAttempts![0].usage.outputTokens).toBeGreaterThan(1);
  });

  it('carries every broken attempt on the error once the retries are spent', async () => {
    fake.enqueue({
      content: [{ type: 'text', text: long }],
      usage: started,
      breakOff: { afterDeltas: 2, type: 'overloaded_error' },
    });
    const error = await sut(0)
      .chatWithTools(question, [], { system: 'sys' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmError);
    expect(stoppedAttemptsOf(error)).toEqual([
      expect.objectContaining({ cause: 'broken', usage: expect.objectContaining({ inputTokens: 1234 }) }),
    ]);
  });
});
