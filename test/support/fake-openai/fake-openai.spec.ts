import OpenAI from 'openai';
import { FakeOpenAi } from './fake-openai.server';

/** The fake refuses what the real Chat Completions API refuses, in its words, through the real SDK. */
describe(FakeOpenAi.name, () => {
  let fake: FakeOpenAi;
  let client: OpenAI;
  beforeAll(async () => {
    fake = await FakeOpenAi.start({ modelsWithoutTools: ['gemma'] });
    client = new OpenAI({ apiKey: 'sk-fake', baseURL: fake.url, maxRetries: 0 });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const refusal = (body: object) =>
    client.chat.completions.create(body as never).then(
      () => undefined,
      (e: InstanceType<typeof OpenAI.APIError>) => ({ status: e.status, message: e.message }),
    );
  const call = { id: 'call_1', type: 'function', function: { name: 'search_book', arguments: '{}' } };

  it('calls the tool a question names with CALL:, then quotes what it said', async () => {
    const tools = [
      {
        type: 'function' as const,
        function: { name: 'search_book', parameters: { type: 'object', properties: { query: { type: 'string' } } } },
      },
      {
        type: 'function' as const,
        function: { name: 'weather__forecast', parameters: { type: 'object', properties: {} } },
      },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Beach tomorrow? CALL:weather__forecast {"city": "Lisbon"}' },
    ];
    const first = await client.chat.completions.create({ model: 'm', messages, tools });
    const [toolCall] = first.choices[0].message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
    expect(toolCall.function).toEqual({ name: 'weather__forecast', arguments: '{"city":"Lisbon"}' });
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: toolCall.id, content: 'Sunny, 24 °C.' });
    const second = await client.chat.completions.create({ model: 'm', messages, tools });
    expect(second.choices[0].message.content).toBe('The tools said: "Sunny, 24 °C."');
  });

  it('refuses a tool message that answers no tool_calls', async () => {
    const r = await refusal({
      model: 'm',
      messages: [
        { role: 'user', content: 'q' },
        { role: 'tool', tool_call_id: 'call_9', content: 'x' },
      ],
    });
    expect(r).toMatchObject({
      status: 400,
      message: expect.stringMatching(/must be a response to a preceeding message with 'tool_calls'/),
    });
  });

  it('refuses tool_calls left unanswered', async () => {
    const messages = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'user', content: 'q2' },
    ];
    expect(await refusal({ model: 'm', messages })).toMatchObject({
      status: 400,
      message: expect.stringMatching(/did not have response messages: call_1/),
    });
  });

  it('refuses tool_choice without tools, stream_options without stream, unknown parameters and roles', async () => {
    const messages = [{ role: 'user', content: 'q' }];
    expect(await refusal({ model: 'm', messages, tool_choice: 'auto' })).toMatchObject({ status: 400 });
    expect(await refusal({ model: 'm', messages, stream_options: { include_usage: true } })).toMatchObject({
      status: 400,
    });
    expect(await refusal({ model: 'm', messages, cache_control: {} })).toMatchObject({
      status: 400,
      message: expect.stringMatching(/Unrecognized request argument/),
    });
    expect(await refusal({ model: 'm', messages: [{ role: 'human', content: 'q' }] })).toMatchObject({ status: 400 });
    expect(await refusal({ model: 'gpt-5', messages, max_tokens: 10 })).toMatchObject({
      status: 400,
      message: expect.stringMatching(/max_completion_tokens/),
    });
  });

  it("refuses tools for a model without them, in Ollama's words", async () => {
    const tools = [
      { type: 'function', function: { name: 'search_book', parameters: { type: 'object', properties: {} } } },
    ];
    expect(await refusal({ model: 'gemma', messages: [{ role: 'user', content: 'q' }], tools })).toMatchObject({
      status: 400,
      message: expect.stringMatching(/gemma:latest does not support tools/),
    });
  });

  it('streams chunks, the usage chunk last, when asked to', async () => {
    fake.enqueue({ text: 'Hello there', usage: { prompt_tokens: 100, completion_tokens: 3, cached_tokens: 0 } });
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'q' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello there');
    expect(chunks.at(-2)?.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 100, completion_tokens: 3 } });
  });
});
