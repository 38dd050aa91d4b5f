import Anthropic from '@anthropic-ai/sdk';
import { apiError, FakeAnthropic } from './fake-anthropic.server';

const MODEL = 'claude-test';
const SEARCH_TOOL = {
  name: 'search_book',
  description: 'Full-text search over the book',
  input_schema: { type: 'object' as const, properties: { query: { type: 'string' } }, required: ['query'] },
};

describe(FakeAnthropic.name, () => {
  let fake: FakeAnthropic;
  let sut: Anthropic;

  beforeAll(async () => {
    fake = await FakeAnthropic.start();
    sut = new Anthropic({ apiKey: 'sk-fake', baseURL: fake.url, maxRetries: 0 });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const ask = (text: string) => ({
    model: MODEL,
    max_tokens: 256,
    messages: [{ role: 'user' as const, content: text }],
  });

  /** user → assistant tool_use → user with `results`, as the agent loop sends its 2nd call. */
  const afterToolUse = (results: Anthropic.ContentBlockParam[]): Anthropic.MessageCreateParamsNonStreaming => ({
    model: MODEL,
    max_tokens: 256,
    tools: [SEARCH_TOOL],
    messages: [
      { role: 'user', content: 'Who is Ahab?' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'search_book', input: { query: 'Ahab' } }],
      },
      { role: 'user', content: results },
    ],
  });

  async function badRequest(params: unknown): Promise<string> {
    const err = await sut.messages.create(params as Anthropic.MessageCreateParamsNonStreaming).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(fake.rejected).toHaveLength(1);
    expect(fake.requests).toHaveLength(0);
    return fake.rejected[0].message;
  }

  it('streams a text reply the SDK accumulates', async () => {
    fake.enqueue({ content: [{ type: 'text', text: 'Ishmael is the narrator of the whole book, mostly.' }] });

    const stream = sut.messages.stream(ask('Who narrates?'));
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const message = await stream.finalMessage();

    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('Ishmael is the narrator of the whole book, mostly.');
    expect(message.content).toEqual([{ type: 'text', text: 'Ishmael is the narrator of the whole book, mostly.' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(fake.requests[0].headers['anthropic-version']).toBe('2026-10-21');
    expect(fake.requests[0].body.stream).toBe(true);
  });

  it('streams a tool_use reply whose input the SDK parses', async () => {
    fake.enqueue({ content: [{ type: 'tool_use', name: 'search_book', input: { query: 'white whale', k: 3 } }] });

    const message = await sut.messages.stream({ ...ask('Find the whale'), tools: [SEARCH_TOOL] }).finalMessage();

    expect(message.stop_reason).toBe('tool_use');
    expect(message.content[0]).toMatchObject({
      type: 'tool_use',
      name: 'search_book',
      input: { query: 'white whale', k: 3 },
    });
    expect((message.content[0] as Anthropic.ToolUseBlock).id).toMatch(/^toolu_/);
  });

  it('answers create() with a Message and a request-id', async () => {
    const { data, response } = await sut.messages.create(ask('Hello')).withResponse();

    expect(data).toMatchObject({ type: 'message', role: 'assistant', model: MODEL, stop_sequence: null });
    expect(data.content).toEqual([{ type: 'text', text: 'Answer: Hello' }]);
    expect(response.headers.get('request-id')).toMatch(/^req_/);
  });

  it('by default calls the first tool with the question, then answers citing [1]', async () => {
    const first = await sut.messages.create({ ...ask('Who is Ahab?'), tools: [SEARCH_TOOL] });
    expect(first.content[0]).toMatchObject({ type: 'tool_use', name: 'search_book', input: { query: 'Who is Ahab?' } });

    const second = await sut.messages.create(
      afterToolUse([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Ahab is the captain of the Pequod.' }]),
    );
    expect(second.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('[1]') });
  });

  it('calls the tools a question names with CALL:, one after another, then quotes what they said', async () => {
    const forecast = { ...SEARCH_TOOL, name: 'weather__forecast' };
    const tide = { ...SEARCH_TOOL, name: 'weather__tide' };
    const question = 'Beach tomorrow? CALL:weather__forecast {"city": "Lisbon {centre}"} CALL:weather__tide';
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: [{ type: 'text', text: question }] }];
    const next = () =>
      sut.messages.create({ model: MODEL, max_tokens: 256, tools: [SEARCH_TOOL, forecast, tide], messages });
    const answered = async (id: string, text: string) => {
      const reply = await next();
      messages.push(
        { role: 'assistant', content: reply.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: (reply.content[0] as Anthropic.ToolUseBlock).id, content: text },
          ],
        },
      );
      return { ...reply.content[0], id };
    };
    expect(await answered('1', 'Sunny, 24 °C.')).toMatchObject({
      type: 'tool_use',
      name: 'weather__forecast',
      input: { city: 'Lisbon {centre}' },
    });
    expect(await answered('2', 'High tide at 14:05.')).toMatchObject({
      type: 'tool_use',
      name: 'weather__tide',
      input: {},
    });
    expect((await next()).content).toEqual([
      expect.objectContaining({ type: 'text', text: 'The tools said: "Sunny, 24 °C." "High tide at 14:05."' }),
    ]);
    // a tool that is not offered: the fake says so instead of calling it
    const refused = await sut.messages.create({ ...ask('CALL:weather__alerts'), tools: [SEARCH_TOOL] });
    expect(refused.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('I cannot call weather__alerts'),
    });
  });

  it('rejects a tool_use left without its tool_result', async () => {
    const message = await badRequest(afterToolUse([{ type: 'text', text: 'never mind' }]));
    expect(message).toContain('`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1');
  });

  it('rejects tool_result blocks that do not come first', async () => {
    const message = await badRequest(
      afterToolUse([
        { type: 'text', text: 'Here you go' },
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Ahab is the captain.' },
      ]),
    );
    expect(message).toMatch(/tool_result` block\(s\) must come first/);
  });

  it('rejects temperature, removed in 2026-10-21', async () => {
    expect(await badRequest({ ...ask('Hi'), temperature: 0.2 })).toBe('temperature: Extra inputs are not permitted');
  });

  it('rejects a fifth cache_control breakpoint', async () => {
    const cached = (text: string) => ({ type: 'text', text, cache_control: { type: 'ephemeral' } });
    const message = await badRequest({
      ...ask('unused'),
      system: [cached('a'), cached('b'), cached('c')],
      messages: [{ role: 'user', content: [cached('d'), cached('e')] }],
    });
    expect(message).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.');
  });

  it('answers 401 without credentials and 400 without anthropic-version', async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`${fake.url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify(ask('Hi')) });

    const noKey = await post({ 'anthropic-version': '2026-10-21' });
    const noVersion = await post({ authorization: 'Bearer sk-fake' });

    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({ error: { message: 'anthropic-version: header is required' } });
  });

  it('lets the SDK retry past a 529', async () => {
    fake.enqueue(apiError(529, 'Overloaded'), { content: [{ type: 'text', text: 'Made it' }] });

    const message = await sut.messages.create(ask('Hi'), { maxRetries: 2 });

    expect(message.content).toEqual([{ type: 'text', text: 'Made it' }]);
    expect(fake.requests).toHaveLength(2);
  });

  it('records a stream the client aborts midway', async () => {
    const longText = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    fake.enqueue({ content: [{ type: 'text', text: longText }], delayMsPerChunk: 20 });

    const stream = sut.messages.stream(ask('Tell me everything'));
    stream.on('text', () => stream.abort());
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);

    await fake.waitFor('the aborted stream to be recorded', () => fake.aborted === 1);
    expect(fake.requests[0].aborted).toBe(true);
  });

  it('reports cache reads for a request that shares a cached prefix', async () => {
    const system = [
      { type: 'text' as const, text: 'You discuss books. '.repeat(50), cache_control: { type: 'ephemeral' as const } },
    ];
    const turn1: Anthropic.MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: 'Who is Ahab?', cache_control: { type: 'ephemeral' } }] },
    ];
    const turn2: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Who is Ahab?' },
      { role: 'assistant', content: 'The captain.' },
      { role: 'user', content: [{ type: 'text', text: 'And Ishmael?', cache_control: { type: 'ephemeral' } }] },
    ];

    const first = await sut.messages.create({ model: MODEL, max_tokens: 64, system, messages: turn1 });
    const second = await sut.messages.create({ model: MODEL, max_tokens: 64, system, messages: turn2 });

    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    // The whole first request (system + first question) is read back: the breakpoint moved on.
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBeGreaterThan(0);
  });

  it('counts every input token as uncached when its prompt-cache simulation is off', async () => {
    const light = await FakeAnthropic.start({ simulatePromptCache: false });
    try {
      const client = new Anthropic({ apiKey: 'sk-fake', baseURL: light.url, maxRetries: 0 });
      const system = [
        {
          type: 'text' as const,
          text: 'You discuss books. '.repeat(50),
          cache_control: { type: 'ephemeral' as const },
        },
      ];
      const request = {
        model: MODEL,
        max_tokens: 64,
        system,
        messages: [{ role: 'user' as const, content: 'Who is Ahab?' }],
      };
      await client.messages.create(request);
      const again = await client.messages.create(request);
      expect(again.usage.cache_read_input_tokens).toBe(0);
      expect(again.usage.cache_creation_input_tokens).toBe(0);
      expect(again.usage.input_tokens).toBeGreaterThan(200); // ~chars / 4 of the request
    } finally {
      await light.close();
    }
  });
});

describe('FakeAnthropic Message Batches API (the real SDK)', () => {
  let fake: FakeAnthropic;
  let sut: Anthropic;

  beforeAll(async () => {
    fake = await FakeAnthropic.start({ holdBatches: true });
    sut = new Anthropic({ apiKey: 'sk-fake', baseURL: fake.url, maxRetries: 0 });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const params = (text: string) => ({
    model: MODEL,
    max_tokens: 256,
    messages: [{ role: 'user' as const, content: text }],
  });

  it('keeps a batch in progress until it ends, then gives each request its result as JSONL', async () => {
    fake.enqueue({ content: [{ type: 'text', text: 'one' }] }, apiError(529, 'busy'));
    const created = await sut.messages.batches.create({
      requests: [
        { custom_id: 'a', params: params('first') },
        { custom_id: 'b', params: params('second') },
        { custom_id: 'c', params: { ...params('third'), max_tokens: -1 } },
      ],
    });
    expect(created).toMatchObject({ type: 'message_batch', processing_status: 'in_progress', results_url: null });
    expect(created.request_counts.processing).toBe(3);
    await expect(sut.messages.batches.results(created.id)).rejects.toThrow(/results_url/);

    fake.endBatches();
    const ended = await sut.messages.batches.retrieve(created.id);
    expect(ended.processing_status).toBe('ended');
    expect(ended.request_counts).toMatchObject({ processing: 0, succeeded: 1, errored: 2 });
    const results = new Map<string, Anthropic.Messages.Batches.MessageBatchResult>();
    for await (const r of await sut.messages.batches.results(created.id)) results.set(r.custom_id, r.result);
    const a = results.get('a')!;
    expect(a.type === 'succeeded' && a.message.content).toEqual([{ type: 'text', text: 'one' }]);
    const b = results.get('b')!;
    expect(b.type === 'errored' && b.error.error).toMatchObject({ type: 'overloaded_error', message: 'busy' });
    const c = results.get('c')!;
    expect(c.type === 'errored' && c.error.error.message).toMatch(/max_tokens/);
    expect(fake.requests.map((r) => r.batchId)).toEqual([created.id, created.id]);
  });

  it('refuses what the real API refuses: a bad custom_id, a repeated one, stream in params, no requests', async () => {
    const bad = [
      { requests: [] },
      { requests: [{ custom_id: 'has space', params: params('x') }] },
      {
        requests: [
          { custom_id: 'same', params: params('x') },
          { custom_id: 'same', params: params('y') },
        ],
      },
      { requests: [{ custom_id: 'a', params: { ...params('x'), stream: true } }] },
    ];
    for (const body of bad)
      await expect(sut.messages.batches.create(body as never)).rejects.toMatchObject({ status: 400 });
    await expect(sut.messages.batches.retrieve('msgbatch_nope')).rejects.toMatchObject({ status: 404 });
    expect(fake.batches).toHaveLength(0);
  });
});
