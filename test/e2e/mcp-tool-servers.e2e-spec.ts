import { expectEvent, isEvent, turnOf } from '../support/api';
import { defaultReply } from '../support/fake-anthropic/default-responder';
import {
  isFakeError,
  type FakeReply,
  type FakeError,
  type RecordedRequest,
} from '../support/fake-anthropic/fake-anthropic.server';
import { questionOf } from '../support/fake-anthropic/questions';
import { FakeOpenAi } from '../support/fake-openai/fake-openai.server';
import { brokenTool, forecastTool, slowTool, TestToolServer, type TestTool } from '../support/mcp-tool-server';
import { freePort } from '../support/stack';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';
import { z } from 'zod';

const OWN_TOOLS = ['list_chapters', 'read_passage', 'search_book'];
const LISBON = 'Forecast for Lisbon: sunny, 24 °C, a light breeze from the sea.';

/** A tool the server lists but the operator did not allow-list: never offered, never called. */
const adminTool: TestTool = {
  name: 'drop_all_tables',
  description: 'Deletes every table of the database.',
  input: {},
  run: () => ({ content: [{ type: 'text', text: 'dropped' }] }),
};
const tideTool: TestTool = {
  name: 'tide',
  description: 'High tide times at a port.',
  input: { port: z.string() },
  run: ({ port }) => ({ content: [{ type: 'text', text: `High tide at ${String(port)}: 14:05.` }] }),
};

/** The default fake, whose answer after a tool result streams slowly for a CRASH question: a worker can be killed mid-answer. */
function model(req: RecordedRequest): FakeReply | FakeError {
  const reply = defaultReply(req);
  if (isFakeError(reply) || !questionOf(req).includes('CRASH') || reply.content.some((b) => b.type === 'tool_use'))
    return reply;
  return { ...reply, delayMsPerChunk: 300 };
}

const toolNamesOf = (r: RecordedRequest): string[] => (r.body.tools ?? []).map((t: { name: string }) => t.name);
const initializations = (s: TestToolServer) => s.requests.filter((r) => r.methods.includes('initialize')).length;

describe('the operator’s MCP tool servers (e2e: the official MCP SDK on both sides, the Anthropic SDK against the fake)', () => {
  let weather: TestToolServer;
  let late: TestToolServer;
  beforeAll(async () => {
    weather = await TestToolServer.start({ tools: [forecastTool, brokenTool, slowTool(60_000), adminTool] });
    // down when the worker starts
    late = await TestToolServer.start({ port: await freePort(), listen: false, tools: [forecastTool] });
  });
  afterAll(async () => {
    await weather.stop();
    await late.stop();
  });

  const s = useReaderStack({
    fake: { defaultResponder: model },
    env: () => ({
      MCP_TOOL_SERVERS: JSON.stringify({
        weather: {
          url: weather.url,
          headers: { authorization: 'Bearer operator-key' },
          tools: ['forecast', 'broken_lookup', 'slow_lookup'],
        },
        late: { url: late.url },
      }),
      MCP_TOOL_TIMEOUT_MS: '1500',
    }),
  });
  const turnEvents = async (id: string, turnId: string) => (await s.events(id)).filter((e) => turnOf(e) === turnId);
  /** The model calls of the turn that asked `content` (the cache warm-ups aside). */
  const requestsAsking = (content: string) =>
    s.fake.requests.filter((r) => r.body.max_tokens > 0 && questionOf(r).includes(content));

  it('offers the allow-listed tools beside Parley’s own while a server is down, and the model calls one and quotes it', async () => {
    await waitFor('the worker to list the weather tools', () => weather.listings > 0, 20_000);
    const id = await s.conversation();
    const question = 'Shall I go to the beach? CALL:weather__forecast {"city": "Lisbon"}';
    const { turnId, ending } = await s.ask(id, question);
    const events = await turnEvents(id, turnId);
    expect(events.map((e) => e.type)).toEqual([
      'UserMessagePosted',
      'ToolInvoked',
      'ToolResultRecorded',
      'AssistantReplied',
    ]);
    expect(expectEvent(events[1], 'ToolInvoked').data).toMatchObject({
      name: 'weather__forecast',
      input: { city: 'Lisbon' },
    });
    expect(expectEvent(events[2], 'ToolResultRecorded').data).toMatchObject({ content: LISBON, isError: false });
    expect(expectEvent(ending, 'AssistantReplied').data.content).toContain(LISBON);
    expect(weather.calls).toEqual([{ tool: 'forecast', input: { city: 'Lisbon' }, at: expect.any(Number) }]);
    expect(weather.requests.every((r) => r.headers.authorization === 'Bearer operator-key')).toBe(true);

    // what the model was offered: sorted, Parley's own and the allow-listed ones, not the down server's
    const [first] = requestsAsking(question);
    expect(toolNamesOf(first)).toEqual(
      [...OWN_TOOLS, 'weather__broken_lookup', 'weather__forecast', 'weather__slow_lookup'].sort(),
    );
    expect(first.body.tools.find((t: { name: string }) => t.name === 'weather__forecast')).toMatchObject({
      description: "Tomorrow's weather forecast for a city.",
      input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    });
  });

  it('makes a failing tool and a slow one tool errors the model reads; the turn still replies', async () => {
    const id = await s.conversation();
    const { turnId, ending } = await s.ask(
      id,
      'Look both up. CALL:weather__broken_lookup {"what": "tides"} CALL:weather__slow_lookup {"what": "swell"}',
    );
    const results = (await turnEvents(id, turnId)).filter(isEvent('ToolResultRecorded')).map((e) => e.data);
    expect(results).toEqual([
      expect.objectContaining({
        isError: true,
        content: 'the tool server weather failed: database unavailable: connection refused',
      }),
      expect.objectContaining({ isError: true, content: 'the tool server weather failed: no answer within 1.5 s' }),
    ]);
    expect(expectEvent(ending, 'AssistantReplied').data.content).toContain('no answer within 1.5 s');
  });

  it('connects to the server that was down once it answers, and follows its list_changed', async () => {
    await late.listen();
    await waitFor('the worker to connect to the late server', () => late.listings > 0, 40_000, 100);
    const id = await s.conversation();
    expect((await s.ask(id, 'CALL:late__forecast {"city": "Porto"}')).ending.type).toBe('AssistantReplied');
    expect(late.callsOf('forecast')).toBe(1);

    const listed = late.listings;
    late.addTool(tideTool);
    await waitFor('the worker to list again', () => late.listings > listed, 10_000);
    const { ending } = await s.ask(id, 'CALL:late__tide {"port": "Porto"}');
    expect(expectEvent(ending, 'AssistantReplied').data.content).toContain('High tide at Porto: 14:05.');
    expect(toolNamesOf(requestsAsking('CALL:late__tide {"port": "Porto"}')[0])).toContain('late__tide');

    const relisted = late.listings;
    late.removeTool('tide');
    await waitFor('the worker to list again', () => late.listings > relisted, 10_000);
    const gone = await s.ask(id, 'Once more: CALL:late__tide {"port": "Faro"}');
    expect(expectEvent(gone.ending, 'AssistantReplied').data.content).toContain('I cannot call late__tide');
    expect(late.callsOf('tide')).toBe(1);
  });

  it('never offers a tool outside the allow-list, even one the server adds later', async () => {
    const listed = weather.listings;
    weather.addTool(tideTool);
    await waitFor('the worker to list again', () => weather.listings > listed, 10_000);
    const id = await s.conversation();
    const question = 'CALL:weather__drop_all_tables CALL:weather__tide {"port": "Sines"}';
    const { ending } = await s.ask(id, question);
    expect(expectEvent(ending, 'AssistantReplied').data.content).toContain('I cannot call weather__drop_all_tables');
    const offered = toolNamesOf(requestsAsking(question)[0]);
    expect(offered.filter((n) => n.startsWith('weather__'))).toEqual([
      'weather__broken_lookup',
      'weather__forecast',
      'weather__slow_lookup',
    ]);
    expect(weather.callsOf('drop_all_tables') + weather.callsOf('tide')).toBe(0);
  });

  it('does not call the tool again after a crash once its result is recorded', async () => {
    const id = await s.conversation();
    const question = 'CRASH test: CALL:weather__forecast {"city": "Sines"}';
    expect(
      (
        await s.alice.api.POST('/v1/conversations/{id}/messages', {
          params: { path: { id } },
          body: { content: question },
        })
      ).response.status,
    ).toBe(202);
    // the answer after the recorded result is streaming: kill -9 the worker now
    await waitFor('the answer’s call', () => s.fake.requests.some((r) => r.rawBody.includes('Forecast for Sines')));
    const [victim] = s.stack.workers;
    victim.child.kill('SIGKILL');
    await waitFor('the worker to exit', () => victim.child.exitCode !== null || victim.child.signalCode !== null);
    const initialized = initializations(weather);
    await s.stack.startWorker();
    await waitFor('the new worker to connect', () => initializations(weather) > initialized, 20_000);
    const ending = await waitFor(
      'the turn to end',
      async () => (await s.events(id)).find((e) => e.type === 'AssistantReplied' || e.type === 'TurnFailed'),
      40_000,
      250,
    );
    expect(expectEvent(ending, 'AssistantReplied').data.content).toContain('Forecast for Sines');
    const events = await s.events(id);
    expect(events.filter(isEvent('ToolInvoked'))).toHaveLength(1);
    expect(events.filter(isEvent('ToolResultRecorded'))).toHaveLength(1);
    expect(weather.calls.filter((c) => (c.input as { city?: string }).city === 'Sines')).toHaveLength(1);
    // the answer was asked for again (the cut stream), the tool was not
    expect(s.fake.requests.filter((r) => r.rawBody.includes('Forecast for Sines')).length).toBeGreaterThanOrEqual(2);
  }, 90_000);
});

describe('the operator’s MCP tool servers over the Chat Completions API (e2e, the openai SDK against the fake)', () => {
  let openai: FakeOpenAi;
  let weather: TestToolServer;
  beforeAll(async () => {
    openai = await FakeOpenAi.start();
    weather = await TestToolServer.start({ tools: [forecastTool] });
  });
  afterAll(async () => {
    await openai.close();
    await weather.stop();
  });
  afterEach(() => expect(openai.rejected).toEqual([]));

  const s = useReaderStack({
    env: () => ({
      LLM_PROVIDER: 'openai',
      OPENAI_API_KEY: 'sk-fake-openai',
      OPENAI_BASE_URL: openai.url,
      LLM_MODEL: 'acme-chat-1',
      LLM_PRICES: JSON.stringify({ 'acme-chat-1': { provider: 'openai', input: 2, output: 8 } }),
      MCP_TOOL_SERVERS: JSON.stringify({ weather: { url: weather.url } }),
    }),
  });

  it('offers the tool as a function, calls it once and quotes it', async () => {
    await waitFor('the worker to list the weather tools', () => weather.listings > 0, 20_000);
    const id = await s.conversation();
    const { turnId, ending } = await s.ask(id, 'Beach? CALL:weather__forecast {"city": "Lisbon"}');
    const events = (await s.events(id)).filter((e) => turnOf(e) === turnId);
    expect(expectEvent(events.find(isEvent('ToolInvoked')), 'ToolInvoked').data).toMatchObject({
      name: 'weather__forecast',
      input: { city: 'Lisbon' },
      toolUseId: expect.stringMatching(/^call_/),
    });
    expect(expectEvent(ending, 'AssistantReplied').data.content).toContain(LISBON);
    expect(weather.callsOf('forecast')).toBe(1);
    const first = openai.requests.find((r) => JSON.stringify(r.body.messages).includes('CALL:weather__forecast'))!;
    expect(first.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(
      [...OWN_TOOLS, 'weather__forecast'].sort(),
    );
    expect(
      first.body.tools.find((t: { function: { name: string } }) => t.function.name === 'weather__forecast'),
    ).toMatchObject({
      type: 'function',
      function: { parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    });
  });
});
