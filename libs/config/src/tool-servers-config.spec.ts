import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from './config';
import { fitsModelToolName, offeredToolName, splitOfferedName, TOOL_SERVER_NAME_MAX } from './tool-names';
import { toolNeedsApproval } from './tool-servers-config';

const dev = { NODE_ENV: 'development' } as const;
const withServers = (servers: unknown) => loadConfig({ ...dev, MCP_TOOL_SERVERS: JSON.stringify(servers) }).toolServers;

describe('MCP_TOOL_SERVERS', () => {
  it('is empty unset, with a 30 s bound on a call and 32 KiB on its result', () => {
    expect(loadConfig(dev).toolServers).toEqual({ servers: [], timeoutMs: 30_000, resultMaxBytes: 32_768 });
  });

  it('reads each server with its defaults: no headers, every tool, no approval', () => {
    const sut = withServers({
      weather: { url: 'https://tools.example.com/mcp' },
      'crm-eu_2': {
        url: 'http://127.0.0.1:8931/mcp',
        headers: { authorization: 'Bearer s3cret', 'X-Tenant': 'acme' },
        tools: ['find_customer', 'send_email'],
        approval: ['send_email'],
      },
    });
    expect(sut.servers).toEqual([
      { name: 'weather', url: 'https://tools.example.com/mcp', headers: {}, tools: null, approval: 'never' },
      {
        name: 'crm-eu_2',
        url: 'http://127.0.0.1:8931/mcp',
        headers: { authorization: 'Bearer s3cret', 'X-Tenant': 'acme' },
        tools: ['find_customer', 'send_email'],
        approval: ['send_email'],
      },
    ]);
  });

  it('reads a file named instead of JSON, and the bounds of a call', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tool-servers-'));
    writeFileSync(
      join(dir, 'servers.json'),
      JSON.stringify({ files: { url: 'https://f.example/mcp', approval: 'always' } }),
    );
    const sut = loadConfig({
      ...dev,
      MCP_TOOL_SERVERS: join(dir, 'servers.json'),
      MCP_TOOL_TIMEOUT_MS: '5000',
      MCP_TOOL_RESULT_MAX_BYTES: '4096',
    }).toolServers;
    expect(sut).toEqual({
      servers: [{ name: 'files', url: 'https://f.example/mcp', headers: {}, tools: null, approval: 'always' }],
      timeoutMs: 5000,
      resultMaxBytes: 4096,
    });
  });

  it.each([
    ['{"w": ', /MCP_TOOL_SERVERS: not JSON/],
    ['/nowhere/servers.json', /MCP_TOOL_SERVERS: neither a JSON object nor a readable file/],
    ['{"w": {}}', /MCP_TOOL_SERVERS\.w\.url/],
    ['{"w": {"url": "ftp://x.example/mcp"}}', /MCP_TOOL_SERVERS\.w\.url: must be the server’s Streamable HTTP URL/],
    ['{"w": {"url": "tools.example.com"}}', /MCP_TOOL_SERVERS\.w\.url: must be the server’s Streamable HTTP URL/],
    ['{"w": {"url": "https://x.example/mcp", "token": "t"}}', /MCP_TOOL_SERVERS\.w: .*token/],
    [
      '{"w": {"url": "https://x.example/mcp", "approval": "sometimes"}}',
      /MCP_TOOL_SERVERS\.w\.approval: must be "never", "always"/,
    ],
    [
      '{"w": {"url": "https://x.example/mcp", "headers": {"x-key": "a\\r\\nb"}}}',
      /MCP_TOOL_SERVERS\.w\.headers\.x-key: a header value/,
    ],
    [
      '{"w": {"url": "https://x.example/mcp", "headers": {"bad header": "v"}}}',
      /MCP_TOOL_SERVERS\.w\.headers\.bad header: "bad header" is not a header name/,
    ],
    [
      '{"w": {"url": "https://x.example/mcp", "tools": [""]}}',
      /MCP_TOOL_SERVERS\.w\.tools\.0: a tool name is not empty/,
    ],
  ])('stops boot on %s, naming what is wrong', (raw, message) => {
    expect(() => loadConfig({ ...dev, MCP_TOOL_SERVERS: raw })).toThrow(message);
  });

  it.each(['my__server', '_lead', 'trail_', 'dots.are.out', 'spa ce', ''])(
    'refuses the server name %j, which would not make <server>__<tool> names the model APIs take',
    (name) => {
      expect(() => withServers({ [name]: { url: 'https://x.example/mcp' } })).toThrow(/MCP_TOOL_SERVERS.*server name/s);
    },
  );

  it(`refuses a server name over ${TOOL_SERVER_NAME_MAX} characters`, () => {
    expect(() => withServers({ ['s'.repeat(TOOL_SERVER_NAME_MAX + 1)]: { url: 'https://x.example/mcp' } })).toThrow(
      /at most 61 characters/,
    );
    expect(withServers({ ['s'.repeat(TOOL_SERVER_NAME_MAX)]: { url: 'https://x.example/mcp' } }).servers).toHaveLength(
      1,
    );
  });

  it('refuses allow-listed or approval names the model could never be offered, and approvals of tools left out', () => {
    expect(() => withServers({ w: { url: 'https://x.example/mcp', tools: ['get.forecast'] } })).toThrow(
      /MCP_TOOL_SERVERS\.w\.tools\.0: w__get\.forecast is not a tool name the model APIs take/,
    );
    expect(() => withServers({ w: { url: 'https://x.example/mcp', approval: ['x'.repeat(62)] } })).toThrow(
      /MCP_TOOL_SERVERS\.w\.approval\.0/,
    );
    expect(() =>
      withServers({ w: { url: 'https://x.example/mcp', tools: ['forecast'], approval: ['send_postcard'] } }),
    ).toThrow(/MCP_TOOL_SERVERS\.w\.approval\.0: send_postcard is not among this server's tools/);
  });

  it.each([
    ['MCP_TOOL_TIMEOUT_MS', '0'],
    ['MCP_TOOL_TIMEOUT_MS', '600001'],
    ['MCP_TOOL_RESULT_MAX_BYTES', '100'],
  ])('stops boot on %s=%s', (variable, value) => {
    expect(() => loadConfig({ ...dev, [variable]: value })).toThrow(new RegExp(variable));
  });
});

describe('tool names', () => {
  it('offers a tool as <server>__<tool> and tells the server back from the first __', () => {
    expect(offeredToolName('crm-eu_2', 'send__email')).toBe('crm-eu_2__send__email');
    expect(splitOfferedName('crm-eu_2__send__email')).toEqual({ server: 'crm-eu_2', tool: 'send__email' });
    expect(splitOfferedName('search_book')).toBeNull();
    expect(splitOfferedName('__x')).toBeNull();
  });

  it('takes only names both model APIs take: ^[a-zA-Z0-9_-]{1,64}$', () => {
    expect(fitsModelToolName('weather__get-forecast_2')).toBe(true);
    expect(fitsModelToolName('w__' + 'x'.repeat(61))).toBe(true);
    expect(fitsModelToolName('w__' + 'x'.repeat(62))).toBe(false);
    for (const bad of ['w__get.forecast', 'w__get forecast', 'w__prévision', ''])
      expect(fitsModelToolName(bad)).toBe(false);
  });

  it('says which tools wait for approval: all, the listed ones, or none', () => {
    expect(toolNeedsApproval({ approval: 'always' }, 'forecast')).toBe(true);
    expect(toolNeedsApproval({ approval: ['send_postcard'] }, 'send_postcard')).toBe(true);
    expect(toolNeedsApproval({ approval: ['send_postcard'] }, 'forecast')).toBe(false);
    expect(toolNeedsApproval({ approval: 'never' }, 'send_postcard')).toBe(false);
  });
});
