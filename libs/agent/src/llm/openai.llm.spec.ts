import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatApiError, FakeOpenAi } from '../../../../test/support/fake-openai/fake-openai.server';
import { isAbort } from './provider-call';
import { answerOf, LlmError, LlmMessage, LlmToolSpec, stoppedAttemptsOf } from './llm.types';
import { openAiBaseUrlWarning, OpenAiLlm, TOOLS_UNSUPPORTED } from './openai.llm';

/** The real `openai` SDK over HTTP against the fake Chat Completions API. */
describe(OpenAiLlm.name, () => {
  let fake: FakeOpenAi;
  beforeAll(async () => {
    fake = await FakeOpenAi.start({ modelsWithoutTools: ['gemma-small'] });
  });
  afterEach(() => {
    expect(fake.rejected.filter((r) => r.status !== 400 || !/does not support tools/.test(r.message))).toEqual([]);
    fake.reset();
  });
  afterAll(() => fake.close());

  const sut = (maxRetries = 0) =>
    new OpenAiLlm({ model: 'acme-chat-1', maxTokens: 512, maxRetries, apiKey: 'sk-fake', baseUrl: fake.url });
  const search: LlmToolSpec = {
    name: 'search_book',
    description: 'Search the book',
    inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  };
  const question: LlmMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'Who sat on the mushroom?' }] }];

  it('asks for a tool, then answers from its result: tool_calls answered by role "tool" messages', async () => {
    fake.enqueue({
      text: 'Let me look.',
      toolCalls: [{ id: 'call_1', name: 'search_book', arguments: { query: 'mushroom' } }],
    });
    const first = answerOf(await sut().chatWithTools(question, [search], { system: 'sys' }));
    expect(first).toMatchObject({
      stopReason: 'tool_use',
      model: 'acme-chat-1',
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'call_1', name: 'search_book', input: { query: 'mushroom' } },
      ],
    });
    const followUp: LlmMessage[] = [
      ...question,
      { role: 'assistant', content: first.content },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            toolUseId: 'call_1',
            content: '[1] The caterpillar sat on the mushroom.',
            isError: false,
          },
          { type: 'text', text: 'Only what the book says.' },
        ],
      },
    ];
    const deltas: string[] = [];
    const second = answerOf(
      await sut().chatWithTools(followUp, [search], { system: 'sys', onTextDelta: (t) => deltas.push(t) }),
    );
    expect(second.stopReason).toBe('end_turn');
    expect(deltas.join('')).toBe((second.content[0] as { text: string }).text);
    const sent = fake.requests[1].body;
    expect(sent.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(sent.messages[2].tool_calls[0]).toEqual({
      id: 'call_1',
      type: 'function',
      function: { name: 'search_book', arguments: '{"query":"mushroom"}' },
    });
    expect(sent).toMatchObject({ stream: true, stream_options: { include_usage: true }, tool_choice: 'auto' });
  });

  it('counts cached_tokens as cache reads, outside the input tokens', async () => {
    fake.enqueue({ text: 'Yes.', usage: { prompt_tokens: 2000, completion_tokens: 7, cached_tokens: 1536 } });
    const result = answerOf(await sut().chatWithTools(question, [], { system: 'sys' }));
    expect(result.usage).toEqual({
      inputTokens: 464,
      outputTokens: 7,
      cacheReadInputTokens: 1536,
      cacheCreationInputTokens: 0,
    });
  });

  it('waits as Retry-After says on a 429, then answers', async () => {
    fake.enqueue(chatApiError(429, 'Rate limit reached', 1));
    const started = Date.now();
    const result = answerOf(await sut(2).chatWithTools(question, [], { system: 'sys' }));
    expect(result.stopReason).toBe('end_turn');
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1].at - started).toBeGreaterThanOrEqual(950);
  });

  it('asks again when a stream breaks off midway, and carries the broken attempt as billed', async () => {
    fake.enqueue({ text: 'word '.repeat(40), breakOff: { afterChunks: 5 } });
    const result = answerOf(await sut(2).chatWithTools(question, [], { system: 'sys' }));
    expect(result.stopReason).toBe('end_turn');
    expect(result.stoppedAttempts).toEqual([
      expect.objectContaining({ cause: 'broken', estimated: true, messageId: expect.stringMatching(/^chatcmpl-/) }),
    ]);
  });

  it('aborts the HTTP stream on the signal; the attempt carries an estimate, marked as one', async () => {
    fake.enqueue({ text: 'word '.repeat(300), delayMsPerChunk: 10 });
    const controller = new AbortController();
    let seen = '';
    const error = await sut()
      .chatWithTools(question, [], {
        system: 'sys',
        signal: controller.signal,
        onTextDelta: (t) => {
          seen += t;
          if (seen.length >= 50) controller.abort();
        },
      })
      .catch((e: unknown) => e);
    expect(isAbort(error)).toBe(true);
    await fake.waitFor('the abort', () => fake.aborted === 1);
    const [stopped] = stoppedAttemptsOf(error);
    expect(stopped).toMatchObject({ cause: 'aborted', estimated: true, model: 'acme-chat-1' });
    expect(stopped.usage.inputTokens).toBeGreaterThan(0);
    expect(stopped.usage.outputTokens).toBeGreaterThanOrEqual(Math.ceil(seen.length / 4));
  });

  it("says a model refused tools (Ollama's 400) with llm_tools_unsupported, not retryable", async () => {
    const error = await sut(3)
      .chatWithTools(question, [search], { system: 'sys', model: 'gemma-small' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ code: TOOLS_UNSUPPORTED, retryable: false });
    expect(fake.rejected).toHaveLength(1);
  });

  it('fails a 400 without retrying it', async () => {
    fake.enqueue(chatApiError(400, 'bad'));
    const error = await sut(3)
      .chatWithTools(question, [], { system: 'sys' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'llm_http_400', retryable: false });
    expect(fake.requests).toHaveLength(1);
  });
});

describe('OpenAiLlm and a self-hosted server set up wrong', () => {
  const question: LlmMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'Who sat on the mushroom?' }] }];
  const sut = (baseUrl: string) => new OpenAiLlm({ model: 'llama3.1:8b', maxTokens: 64, maxRetries: 0, baseUrl });
  const failureOf = (baseUrl: string): Promise<LlmError> =>
    sut(baseUrl)
      .chatWithTools(question, [], { system: 'sys' })
      .then(
        () => Promise.reject(new Error('the call was expected to fail')),
        (e: unknown) => e as LlmError,
      );

  it('names the unreachable server in what the log gets, never in what the reader gets', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as AddressInfo;
        s.close(() => resolve(port));
      });
    });
    const error = await failureOf(`http://127.0.0.1:${closed}/v1`);
    expect(error).toMatchObject({ code: 'llm_unreachable', retryable: true });
    expect(error.providerDetail).toContain(`http://127.0.0.1:${closed}/v1`);
    expect(error.message).not.toContain('127.0.0.1');
  });

  it('says OPENAI_BASE_URL lacks /v1 when the server answers 404 (Ollama\'s "404 page not found")', async () => {
    const ollama = createServer((_req, res) =>
      res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found'),
    );
    await new Promise<void>((resolve) => ollama.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(ollama.address() as AddressInfo).port}`;
      const error = await failureOf(base);
      expect(error).toMatchObject({ code: 'llm_http_404', retryable: false });
      expect(error.providerDetail).toContain(base);
      expect(error.providerDetail).toContain('/v1');
      expect(error.message).not.toContain(base);
    } finally {
      await new Promise((resolve) => ollama.close(resolve));
    }
  });

  it.each([
    ['http://127.0.0.1:11434', true],
    ['http://127.0.0.1:11434/', true],
    ['http://127.0.0.1:11434/api', true],
    ['http://127.0.0.1:11434/v1', false],
    ['http://127.0.0.1:11434/v1/', false],
    ['https://acme.openai.azure.com/openai/v1', false],
  ])('warns at boot when OPENAI_BASE_URL=%s lacks /v1: %s', (url, warns) => {
    const warning = openAiBaseUrlWarning(url);
    expect(warning !== undefined).toBe(warns);
    if (warning) expect(warning).toMatch(/^OPENAI_BASE_URL=\S+ does not end in \/v1/);
  });

  it('has nothing to say without OPENAI_BASE_URL (OpenAI itself)', () => {
    expect(openAiBaseUrlWarning(undefined)).toBeUndefined();
  });
});
