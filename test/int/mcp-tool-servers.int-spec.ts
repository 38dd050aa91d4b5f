import { FixedTools, McpToolServer, McpToolServers, ToolContext, ToolRegistry } from '@parley/agent';
import { loadConfig, ToolServerConfig } from '@parley/config';
import {
  brokenTool,
  forecastTool,
  postcardTool,
  slowTool,
  TestToolServer,
  type TestTool,
} from '../support/mcp-tool-server';
import { freePort } from '../support/stack';
import { waitFor } from '../support/wait-for';
import { z } from 'zod';

const ctx = { conversationId: 'c', bookId: null, bookIds: [], readingPosition: null } as unknown as ToolContext;
const bounds = { timeoutMs: 5_000, resultMaxBytes: 32_768 };
const config = (url: string, more: Partial<ToolServerConfig> = {}): ToolServerConfig => ({
  name: 'weather',
  url,
  headers: {},
  tools: null,
  approval: 'never',
  ...more,
});
const names = (s: { tools(): readonly { name: string }[] }) => s.tools().map((t) => t.name);

/** A tool whose name no model API takes: listed by the server, skipped by Parley. */
const dottedTool: TestTool = { ...forecastTool, name: 'get.forecast' };

describe('the operator’s MCP tool servers (int: the official SDK’s client and server)', () => {
  const opened: Array<() => Promise<void>> = [];
  const keep = <T extends McpToolServer | McpToolServers | TestToolServer>(x: T): T => {
    opened.push(() =>
      x instanceof TestToolServer ? x.stop() : x instanceof McpToolServer ? x.close() : x.onApplicationShutdown(),
    );
    return x;
  };
  afterEach(async () => {
    for (const close of opened.splice(0).reverse()) await close();
  });

  it('lists every page of tools with the configured headers, offers them as <server>__<tool>, and calls one', async () => {
    const server = keep(
      await TestToolServer.start({ tools: [forecastTool, postcardTool, slowTool(10), dottedTool], pageSize: 1 }),
    );
    const sut = keep(new McpToolServer(config(server.url, { headers: { authorization: 'Bearer op-key' } }), bounds));
    sut.start();
    await sut.untilConnected();
    expect(sut.connected).toBe(true);
    expect(server.listings).toBe(4); // one page each
    expect(server.requests.every((r) => r.headers.authorization === 'Bearer op-key')).toBe(true);
    // get.forecast is skipped: weather__get.forecast is no name the model APIs take
    expect(names(sut)).toEqual(['weather__forecast', 'weather__send_postcard', 'weather__slow_lookup']);
    const forecast = sut.tools()[0];
    expect(forecast).toMatchObject({
      description: "Tomorrow's weather forecast for a city.",
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      origin: { server: 'weather', tool: 'forecast' },
      needsApproval: false,
    });
    expect(forecast.inputSchema).not.toHaveProperty('$schema');
    expect(await forecast.run({ city: 'Lisbon' }, ctx)).toEqual({
      content: 'Forecast for Lisbon: sunny, 24 °C, a light breeze from the sea.',
    });
    expect(server.calls).toEqual([{ tool: 'forecast', input: { city: 'Lisbon' }, at: expect.any(Number) }]);
    // a worker that stops ends its session
    await sut.close();
    expect(server.ended).toBe(1);
  });

  it('offers only allow-listed tools, and marks those the approval setting names', async () => {
    const server = keep(await TestToolServer.start({ tools: [forecastTool, postcardTool, brokenTool] }));
    const env = {
      NODE_ENV: 'development',
      MCP_TOOL_SERVERS: JSON.stringify({
        weather: { url: server.url, tools: ['forecast', 'send_postcard', 'not_there'], approval: ['send_postcard'] },
        office: { url: server.url, approval: 'always' },
      }),
    };
    const sut = keep(new McpToolServers(loadConfig(env)));
    sut.onModuleInit();
    const registry = new ToolRegistry([new FixedTools([]), sut]);
    await waitFor('both servers listed', () => registry.specsFor(ctx).length === 5);
    expect(registry.specsFor(ctx).map((t) => t.name)).toEqual([
      'office__broken_lookup',
      'office__forecast',
      'office__send_postcard',
      'weather__forecast',
      'weather__send_postcard',
    ]);
    expect(registry.needsApproval('weather__send_postcard')).toBe(true);
    expect(registry.needsApproval('weather__forecast')).toBe(false);
    expect(registry.needsApproval('office__forecast')).toBe(true);
    // what the allow-list leaves out cannot be called
    expect(await registry.run('weather__broken_lookup', { what: 'x' }, ctx)).toEqual({
      isError: true,
      content: 'no tool named weather__broken_lookup is available',
    });
    expect(server.callsOf('broken_lookup')).toBe(0);
  });

  it('lists the tools again on notifications/tools/list_changed', async () => {
    const server = keep(await TestToolServer.start());
    const sut = keep(new McpToolServer(config(server.url), bounds));
    sut.start();
    await sut.untilConnected();
    expect(names(sut)).toEqual(['weather__forecast', 'weather__send_postcard']);
    server.addTool({ ...forecastTool, name: 'tide', description: 'High tide times.', input: { port: z.string() } });
    await waitFor('the new tool', () => names(sut).includes('weather__tide'), 5_000);
    server.removeTool('send_postcard');
    await waitFor('the removed tool gone', () => !names(sut).includes('weather__send_postcard'), 5_000);
    expect(names(sut)).toEqual(['weather__forecast', 'weather__tide']);
  });

  it('makes an error result, a timeout and a cancel of the turn what they are', async () => {
    const server = keep(await TestToolServer.start({ tools: [brokenTool, slowTool(60_000)] }));
    const sut = keep(new McpToolServer(config(server.url), { ...bounds, timeoutMs: 500 }));
    sut.start();
    await sut.untilConnected();
    const [broken, slow] = sut.tools();
    expect(await broken.run({ what: 'x' }, ctx)).toEqual({
      isError: true,
      content: 'the tool server weather failed: database unavailable: connection refused',
    });
    const started = Date.now();
    expect(await slow.run({ what: 'x' }, ctx)).toEqual({
      isError: true,
      content: 'the tool server weather failed: no answer within 0.5 s',
    });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await broken.run('not an object', ctx)).toEqual({
      isError: true,
      content: 'the tool server weather failed: its input must be a JSON object',
    });
    // the turn's cancel is not a tool error: it goes on up, as a search's does
    const cancel = new AbortController();
    const running = slow.run({ what: 'x' }, { ...ctx, signal: cancel.signal });
    setTimeout(() => cancel.abort(new Error('cancelled by the reader')), 100);
    await expect(running).rejects.toThrow('cancelled by the reader');
    expect(server.callsOf('slow_lookup')).toBe(2);
  });

  it('starts without a server that is down, tries again with backoff, and offers its tools once it answers', async () => {
    const server = keep(await TestToolServer.start({ port: await freePort(), listen: false }));
    const tries: number[] = [];
    const sut = keep(
      new McpToolServer(config(server.url), bounds, (failures) => {
        tries.push(failures);
        return 100;
      }),
    );
    sut.start(); // returns at once
    expect(sut.tools()).toEqual([]);
    await waitFor('a few tries', () => tries.length >= 3);
    await server.listen();
    await sut.untilConnected();
    expect(tries.slice(0, 3)).toEqual([0, 1, 2]);
    expect(names(sut)).toEqual(['weather__forecast', 'weather__send_postcard']);
  });

  it('says a server that went down is a tool error, keeps its tools on offer, and reconnects when it is back', async () => {
    const server = keep(await TestToolServer.start());
    const sut = keep(new McpToolServer(config(server.url), bounds, () => 100));
    sut.start();
    await sut.untilConnected();
    const forecast = sut.tools()[0];
    await server.stop();
    const down = await forecast.run({ city: 'Porto' }, ctx);
    expect(down).toMatchObject({ isError: true });
    expect(down.content).toMatch(
      /^the tool server weather failed: (cannot reach the server \((ECONNREFUSED|other side closed)\)|it is not connected)/,
    );
    expect(names(sut)).toEqual(['weather__forecast', 'weather__send_postcard']);
    await server.listen();
    await waitFor('a new session', () => sut.connected, 10_000);
    expect(await sut.tools()[0].run({ city: 'Porto' }, ctx)).toEqual({
      content: 'Forecast for Porto: sunny, 24 °C, a light breeze from the sea.',
    });
  });

  it('opens a new session when the server forgot the old one (404), and calls once', async () => {
    const server = keep(await TestToolServer.start());
    const sut = keep(new McpToolServer(config(server.url), bounds, () => 100));
    sut.start();
    await sut.untilConnected();
    server.forgetSessions();
    expect(await sut.tools()[0].run({ city: 'Faro' }, ctx)).toEqual({
      content: 'Forecast for Faro: sunny, 24 °C, a light breeze from the sea.',
    });
    expect(server.callsOf('forecast')).toBe(1);
    expect(server.requests.filter((r) => r.methods.includes('initialize'))).toHaveLength(2);
  });

  it('reconnects to a server that restarted on its own, without a call to notice', async () => {
    const server = keep(await TestToolServer.start());
    const sut = keep(new McpToolServer(config(server.url), bounds, () => 100));
    sut.start();
    await sut.untilConnected();
    await server.stop();
    await server.listen(); // the same port, no sessions: the client's stream to it ends
    await waitFor(
      'a second session',
      () => server.requests.filter((r) => r.methods.includes('initialize')).length === 2,
      15_000,
    );
    await waitFor('connected', () => sut.connected);
    expect(await sut.tools()[0].run({ city: 'Faro' }, ctx)).toEqual({
      content: 'Forecast for Faro: sunny, 24 °C, a light breeze from the sea.',
    });
    expect(server.callsOf('forecast')).toBe(1);
  });
});
