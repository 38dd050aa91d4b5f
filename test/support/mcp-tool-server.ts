/**
 * An operator's MCP tool server for tests: the official SDK's McpServer behind its
 * StreamableHTTPServerTransport (stateful sessions, so `notifications/tools/list_changed` reaches
 * the client over its GET stream), on a port of its own. It counts calls per tool, records each
 * request's headers and JSON-RPC methods, can change its tools at runtime (every session is told),
 * page its tool list, and stop and start again on the same port (a server that is down).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  type CallToolResult,
  isInitializeRequest,
  ListToolsRequestSchema,
  type ListToolsResult,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { readBody } from './http-body';

export interface TestTool {
  name: string;
  description: string;
  /** the input's fields, as McpServer.registerTool takes them */
  input: z.ZodRawShape;
  run(args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> | CallToolResult;
}

export interface ToolCall {
  tool: string;
  input: unknown;
  at: number;
}

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });

/** A free tool: a forecast for a city, always the same. */
export const forecastTool: TestTool = {
  name: 'forecast',
  description: "Tomorrow's weather forecast for a city.",
  input: { city: z.string().describe('the city, e.g. Lisbon') },
  run: ({ city }) => text(`Forecast for ${String(city)}: sunny, 24 °C, a light breeze from the sea.`),
};

/** A tool that acts on the world: sends a postcard (what an operator would ask approval for). */
export const postcardTool: TestTool = {
  name: 'send_postcard',
  description: 'Sends a postcard to someone.',
  input: { to: z.string(), message: z.string() },
  run: ({ to }) => text(`Postcard sent to ${String(to)}.`),
};

/** Answers after `ms`, unless the caller cancels first. */
export function slowTool(ms: number, name = 'slow_lookup'): TestTool {
  return {
    name,
    description: 'Looks something up, slowly.',
    input: { what: z.string() },
    run: async (_args, signal) => {
      await sleep(ms, undefined, { signal });
      return text('found it, eventually');
    },
  };
}

/** Answers every call with an error result (isError). */
export const brokenTool: TestTool = {
  name: 'broken_lookup',
  description: 'Looks something up in a database that is down.',
  input: { what: z.string() },
  run: () => ({ isError: true, content: [{ type: 'text', text: 'database unavailable: connection refused' }] }),
};

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  registered: Map<string, RegisteredTool>;
}

export class TestToolServer {
  readonly calls: ToolCall[] = [];
  /** every POST's JSON-RPC methods and headers, in order */
  readonly requests: Array<{ methods: string[]; headers: IncomingMessage['headers'] }> = [];
  /** sessions clients ended (DELETE) */
  ended = 0;
  private readonly tools = new Map<string, TestTool>();
  private readonly sessions = new Map<string, Session>();
  private http: Server | null = null;

  private constructor(
    /** 0 until it first listens on a free port; then the same port across stop() and listen() */
    private boundPort: number,
    tools: TestTool[],
    private readonly pageSize?: number,
  ) {
    for (const t of tools) this.tools.set(t.name, t);
  }

  /** Listens on `port` (0: any free one) with `tools` (default: forecast and send_postcard). */
  static async start(
    opts: { tools?: TestTool[]; port?: number; pageSize?: number; listen?: boolean } = {},
  ): Promise<TestToolServer> {
    const server = new TestToolServer(opts.port ?? 0, opts.tools ?? [forecastTool, postcardTool], opts.pageSize);
    if (opts.listen !== false) await server.listen();
    return server;
  }

  get port(): number {
    return this.boundPort;
  }

  /** The Streamable HTTP endpoint, what MCP_TOOL_SERVERS names. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  callsOf(tool: string): number {
    return this.calls.filter((c) => c.tool === tool).length;
  }

  /** How many times a client listed the tools (each page counts). */
  get listings(): number {
    return this.requests.filter((r) => r.methods.includes('tools/list')).length;
  }

  /** Adds a tool on every open session; the SDK sends each client notifications/tools/list_changed. */
  addTool(tool: TestTool): void {
    this.tools.set(tool.name, tool);
    for (const s of this.sessions.values()) this.register(s, tool);
  }

  removeTool(name: string): void {
    this.tools.delete(name);
    for (const s of this.sessions.values()) {
      s.registered.get(name)?.remove();
      s.registered.delete(name);
    }
  }

  /** Starts listening (again, on the same port after stop()). */
  async listen(): Promise<void> {
    const http = createServer((req, res) => {
      this.handle(req, res).catch((e) => {
        if (!res.headersSent) res.writeHead(500).end(String(e));
      });
    });
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(this.port, '127.0.0.1', resolve);
    });
    this.boundPort = (http.address() as AddressInfo).port;
    this.http = http;
  }

  /** Forgets every session while it listens on, as a server does that expires them: their requests answer 404. */
  forgetSessions(): void {
    this.sessions.clear();
  }

  /** Stops listening and forgets every session, as a server that goes down does. */
  async stop(): Promise<void> {
    const http = this.http;
    this.http = null;
    await Promise.all([...this.sessions.values()].map((s) => s.transport.close().catch(() => undefined)));
    this.sessions.clear();
    if (!http) return;
    const closed = new Promise<void>((resolve) => http.close(() => resolve()));
    http.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if ((req.url ?? '').split('?')[0] !== '/mcp') return void res.writeHead(404).end();
    const body = req.method === 'POST' ? JSON.parse(await readBody(req)) : undefined;
    if (req.method === 'POST') {
      const messages = Array.isArray(body) ? body : [body];
      this.requests.push({ methods: messages.map((m) => m?.method).filter(Boolean), headers: req.headers });
    }
    if (req.method === 'DELETE') this.ended++;
    const sessionId = req.headers['mcp-session-id'];
    const session = typeof sessionId === 'string' ? this.sessions.get(sessionId) : undefined;
    if (session) return session.transport.handleRequest(req, res, body);
    if (sessionId !== undefined || req.method !== 'POST' || !isInitializeRequest(body)) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(
        JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }),
      );
    }
    const fresh = this.newSession();
    await fresh.server.connect(fresh.transport);
    await fresh.transport.handleRequest(req, res, body);
  }

  private newSession(): Session {
    const server = new McpServer({ name: 'test-tools', version: '1.0.0' });
    const session: Session = {
      server,
      registered: new Map(),
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void this.sessions.set(id, session),
      }),
    };
    for (const tool of this.tools.values()) this.register(session, tool);
    if (this.pageSize) this.pageToolList(session);
    return session;
  }

  private register(session: Session, tool: TestTool): void {
    const registered = session.server.registerTool(
      tool.name,
      { description: tool.description, inputSchema: tool.input },
      async (args: Record<string, unknown>, extra) => {
        this.calls.push({ tool: tool.name, input: args, at: Date.now() });
        return tool.run(args, extra.signal);
      },
    );
    session.registered.set(tool.name, registered);
  }

  /** tools/list in pages of `pageSize`, the cursor being the next tool's index. */
  private pageToolList(session: Session): void {
    session.server.server.removeRequestHandler('tools/list');
    session.server.server.setRequestHandler(ListToolsRequestSchema, (request): ListToolsResult => {
      const all = [...this.tools.values()];
      const from = Number(request.params?.cursor ?? 0);
      const page = all.slice(from, from + this.pageSize!).map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: z.toJSONSchema(z.object(t.input)) as ListToolsResult['tools'][number]['inputSchema'],
      }));
      const next = from + this.pageSize!;
      return { tools: page, ...(next < all.length ? { nextCursor: String(next) } : {}) };
    });
  }
}
