import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { apiError, FakeAnthropic } from '../../../../test/support/fake-anthropic/fake-anthropic.server';
import { chatApiError, FakeOpenAi } from '../../../../test/support/fake-openai/fake-openai.server';
import { EndedSpan, recordedSpans } from '../../../../test/support/recorded-spans';
import { AnthropicLlm } from './anthropic.llm';
import { answerOf, LlmClient, LlmError, LlmMessage, stoppedAttemptsOf } from './llm.types';
import { OpenAiLlm } from './openai.llm';
import { classifySdkError, isAbort, SdkErrors } from './provider-call';

/** The spans this file's calls end (one OpenTelemetry SDK for the process). */
const spans = recordedSpans();
beforeAll(() => spans.sdk.start());
afterAll(() => spans.sdk.shutdown());

/**
 * The call helper both adapters share (ProviderCall), through each real SDK against its fake
 * server: a stream broken off midway and asked again is billed once, in one span; an abort is
 * an abort whichever SDK saw it.
 */
describe('ProviderCall, through both adapters', () => {
  let anthropic: FakeAnthropic;
  let openai: FakeOpenAi;
  beforeAll(async () => {
    [anthropic, openai] = await Promise.all([FakeAnthropic.start(), FakeOpenAi.start()]);
  });
  afterEach(() => {
    anthropic.reset();
    openai.reset();
    spans.ended.length = 0;
  });
  afterAll(() => Promise.all([anthropic.close(), openai.close()]));

  const question: LlmMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'Who sat on the mushroom?' }] }];
  const long = 'word '.repeat(300);

  /** Each provider: its adapter, a reply broken off midway, a slow reply, and how many requests its fake saw. */
  const providers = [
    {
      name: 'anthropic',
      model: 'claude-sonnet-5-5',
      sut: (maxRetries: number) =>
        new AnthropicLlm({
          model: 'claude-sonnet-5-5',
          maxTokens: 256,
          maxRetries,
          apiKey: 'sk-fake',
          baseUrl: anthropic.url,
        }),
      enqueueBroken: () =>
        anthropic.enqueue(
          {
            content: [{ type: 'text', text: long }],
            usage: { input_tokens: 1234 },
            breakOff: { afterDeltas: 3, type: 'overloaded_error' },
          },
          { content: [{ type: 'text', text: 'The Caterpillar.' }] },
        ),
      enqueueSlow: () => anthropic.enqueue({ content: [{ type: 'text', text: long }], delayMsPerChunk: 10 }),
      requests: () => anthropic.requests.length,
      aborted: () => anthropic.aborted,
    },
    {
      name: 'openai',
      model: 'acme-chat-1',
      sut: (maxRetries: number) =>
        new OpenAiLlm({ model: 'acme-chat-1', maxTokens: 256, maxRetries, apiKey: 'sk-fake', baseUrl: openai.url }),
      enqueueBroken: () => openai.enqueue({ text: long, breakOff: { afterChunks: 5 } }, { text: 'The Caterpillar.' }),
      enqueueSlow: () => openai.enqueue({ text: long, delayMsPerChunk: 10 }),
      requests: () => openai.requests.length,
      aborted: () => openai.aborted,
    },
  ];

  const chatSpans = (): EndedSpan[] => spans.ended.filter((s) => s.name.startsWith('chat '));

  describe.each(providers)('$name', (p) => {
    const call = (llm: LlmClient, options: Parameters<LlmClient['chatWithTools']>[2] = { system: 'sys' }) =>
      llm.chatWithTools(question, [], options);

    it('bills a stream broken off midway once, beside the answer of the attempt that followed, in one span', async () => {
      p.enqueueBroken();
      const result = answerOf(await call(p.sut(1)));
      expect(result.content).toEqual([{ type: 'text', text: 'The Caterpillar.' }]);
      expect(p.requests()).toBe(2);
      expect(result.stoppedAttempts).toHaveLength(1);
      const [stopped] = result.stoppedAttempts!;
      expect(stopped).toMatchObject({ cause: 'broken', model: expect.any(String) });
      expect(stopped.usage.inputTokens).toBeGreaterThan(0);
      expect(stopped.usage.outputTokens).toBeGreaterThan(0);
      const [span, ...more] = chatSpans();
      expect(more).toEqual([]);
      expect(span.name).toBe(`chat ${p.model}`);
      expect(span.attributes).toMatchObject({
        'gen_ai.provider.name': p.name,
        'gen_ai.request.model': p.model,
        'parley.llm.stopped_attempts': 1,
      });
    });

    it('carries the broken attempt on the error, once, when the retries are spent', async () => {
      p.enqueueBroken();
      const error = await call(p.sut(0)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LlmError);
      expect(error).toMatchObject({ retryable: true, midStream: true });
      expect(p.requests()).toBe(1);
      expect(stoppedAttemptsOf(error)).toEqual([expect.objectContaining({ cause: 'broken' })]);
      expect(chatSpans()).toHaveLength(1);
      expect(chatSpans()[0].attributes['error.type']).toBe((error as LlmError).code);
    });

    it('classifies an abort midway as an abort, the attempt billed as aborted', async () => {
      p.enqueueSlow();
      const controller = new AbortController();
      let seen = '';
      const error = await call(p.sut(2), {
        system: 'sys',
        signal: controller.signal,
        onTextDelta: (text) => {
          seen += text;
          if (seen.length >= 50) controller.abort();
        },
      }).catch((e: unknown) => e);
      expect(isAbort(error)).toBe(true);
      expect(error).not.toBeInstanceOf(LlmError);
      expect(error).toMatchObject({ name: 'AbortError', message: 'Request was aborted.' });
      expect(stoppedAttemptsOf(error)).toEqual([expect.objectContaining({ cause: 'aborted' })]);
      expect(p.requests()).toBe(1); // an abort is never asked again
      await (p.name === 'anthropic' ? anthropic : openai).waitFor('the abort', () => p.aborted() === 1);
      expect(chatSpans()[0].attributes['error.type']).toBe('AbortError');
    });

    it('classifies an abort before the answer as an abort, nothing billed', async () => {
      const controller = new AbortController();
      controller.abort();
      const error = await call(p.sut(2), { system: 'sys', signal: controller.signal }).catch((e: unknown) => e);
      expect(isAbort(error)).toBe(true);
      expect(stoppedAttemptsOf(error)).toEqual([]);
    });
  });
});

describe(classifySdkError.name, () => {
  const anthropicErrors: SdkErrors = {
    APIUserAbortError: Anthropic.APIUserAbortError,
    APIConnectionError: Anthropic.APIConnectionError,
    APIError: Anthropic.APIError,
    overloadedStatus: 529,
    detail: (message) => message,
    inStream: () => new LlmError('in stream', 'llm_stream_x', true, true),
  };
  const status = (code: number) => Anthropic.APIError.generate(code, undefined, 'refused', new Headers());

  it('maps an HTTP status: 408, 409, 429 and 5xx retryable; the overloaded status and 429 by name', () => {
    expect(classifySdkError(status(529), anthropicErrors)).toMatchObject({ code: 'llm_overloaded', retryable: true });
    expect(classifySdkError(status(429), anthropicErrors)).toMatchObject({ code: 'llm_rate_limited', retryable: true });
    expect(classifySdkError(status(503), anthropicErrors)).toMatchObject({ code: 'llm_http_503', retryable: true });
    expect(classifySdkError(status(409), anthropicErrors)).toMatchObject({ code: 'llm_http_409', retryable: true });
    expect(classifySdkError(status(400), anthropicErrors)).toMatchObject({ code: 'llm_http_400', retryable: false });
    // the provider's words for the log, Parley's for the reader
    expect(classifySdkError(status(400), anthropicErrors)).toMatchObject({
      providerDetail: '400 refused',
      message: "The model's provider refused the request.",
    });
  });

  it("reads another SDK's errors only by its own classes", () => {
    const overloaded = OpenAI.APIError.generate(503, undefined, 'busy', new Headers());
    const openaiErrors: SdkErrors = {
      ...anthropicErrors,
      APIUserAbortError: OpenAI.APIUserAbortError,
      APIConnectionError: OpenAI.APIConnectionError,
      APIError: OpenAI.APIError,
      overloadedStatus: 503,
    };
    expect(classifySdkError(overloaded, openaiErrors)).toMatchObject({ code: 'llm_overloaded' });
    // not an Anthropic error: passed on as it is
    expect(classifySdkError(overloaded, anthropicErrors)).toBe(overloaded);
    expect(isAbort(classifySdkError(new OpenAI.APIUserAbortError(), openaiErrors))).toBe(true);
    expect(isAbort(classifySdkError(new Anthropic.APIUserAbortError(), anthropicErrors))).toBe(true);
  });

  it("keeps Parley's own errors and a stream's error event as the adapter reads them", () => {
    const own = new LlmError('over', 'budget_exceeded', false);
    expect(classifySdkError(own, anthropicErrors)).toBe(own);
    const event = new Anthropic.APIError(undefined, { error: { type: 'x' } }, 'x', new Headers());
    expect(classifySdkError(event, anthropicErrors)).toMatchObject({ code: 'llm_stream_x', midStream: true });
    expect(classifySdkError(new Anthropic.APIConnectionError({ message: 'down' }), anthropicErrors)).toMatchObject({
      code: 'llm_unreachable',
      retryable: true,
    });
  });
});

/** A request sent once, not streamed (what contextual retrieval sends), through the same helper. */
describe('a request sent once (complete), through both adapters', () => {
  let anthropic: FakeAnthropic;
  let openai: FakeOpenAi;
  beforeAll(async () => {
    [anthropic, openai] = await Promise.all([FakeAnthropic.start(), FakeOpenAi.start()]);
  });
  afterEach(() => {
    anthropic.reset();
    openai.reset();
    spans.ended.length = 0;
  });
  afterAll(() => Promise.all([anthropic.close(), openai.close()]));

  const book = `<book>${'The lamp had been dark for nine winters. '.repeat(50)}</book>`;
  const claude = (maxRetries = 0) =>
    new AnthropicLlm({
      model: 'claude-haiku-4-5',
      maxTokens: 64,
      maxRetries,
      apiKey: 'sk-fake',
      baseUrl: anthropic.url,
      captureContent: true,
    });
  const chat = () =>
    new OpenAiLlm({ model: 'acme-chat-1', maxTokens: 64, maxRetries: 0, baseUrl: openai.url, captureContent: true });
  const anthropicRequest = {
    model: 'claude-haiku-4-5',
    max_tokens: 64,
    messages: [
      {
        role: 'user' as const,
        content: [
          { type: 'text' as const, text: book, cache_control: { type: 'ephemeral' as const } },
          { type: 'text' as const, text: 'Situate the passage.' },
        ],
      },
    ],
  };

  it('sends the request as it is, and answers with its message id, text and usage, in a span without the prompt', async () => {
    anthropic.enqueue({ content: [{ type: 'text', text: 'In the lamp chapter.' }] });
    const { messageId, result } = await claude().complete(anthropicRequest);
    expect(anthropic.requests[0].body).toEqual(anthropicRequest);
    expect(messageId).toMatch(/^msg_/);
    expect(result.content).toEqual([{ type: 'text', text: 'In the lamp chapter.' }]);
    expect(result.usage.cacheCreationInputTokens + result.usage.inputTokens).toBeGreaterThan(0);
    const [span] = spans.ended.filter((s) => s.name === 'chat claude-haiku-4-5');
    expect(span.attributes).toMatchObject({ 'gen_ai.provider.name': 'anthropic', 'gen_ai.request.max_tokens': 64 });
    // a whole book is no span attribute, even with content capture on; the short answer is
    expect(span.attributes).not.toHaveProperty('gen_ai.input.messages');
    expect(String(span.attributes['gen_ai.output.messages'])).toContain('In the lamp chapter.');
  });

  it('fails as the streamed calls do once the SDK has retried: an LlmError, in Parley words, the span saying which', async () => {
    anthropic.enqueue(apiError(529, 'Overloaded'), apiError(529, 'Overloaded'));
    const error = await claude(1)
      .complete(anthropicRequest)
      .catch((e: unknown) => e);
    expect(anthropic.requests).toHaveLength(2);
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({
      code: 'llm_overloaded',
      retryable: true,
      providerDetail: expect.stringMatching(/529/),
    });
    expect(spans.ended.find((s) => s.name === 'chat claude-haiku-4-5')?.attributes['error.type']).toBe(
      'llm_overloaded',
    );
  });

  it('on the Chat Completions API: the stop at max tokens said as such, and a missing usage counted from the length', async () => {
    const request = {
      model: 'acme-chat-1',
      max_completion_tokens: 64,
      messages: [
        { role: 'system' as const, content: book },
        { role: 'user' as const, content: 'Situate the passage.' },
      ],
    };
    openai.enqueue({ text: 'In the lamp', finishReason: 'length', omitUsage: true });
    const { messageId, result } = await chat().complete(request);
    expect(openai.requests[0].body).toEqual(request);
    expect(messageId).toMatch(/^chatcmpl-/);
    expect(result).toMatchObject({ stopReason: 'max_tokens', content: [{ type: 'text', text: 'In the lamp' }] });
    expect(result.usage).toEqual({
      inputTokens: Math.ceil(JSON.stringify(request.messages).length / 4),
      outputTokens: Math.ceil('In the lamp'.length / 4),
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    });
    openai.enqueue(chatApiError(400, 'bad'));
    await expect(chat().complete(request)).rejects.toMatchObject({ code: 'llm_http_400', retryable: false });
  });
});
