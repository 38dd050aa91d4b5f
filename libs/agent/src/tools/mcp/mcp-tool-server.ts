import { Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResult, ErrorCode, McpError, Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  fitsModelToolName,
  MODEL_TOOL_NAME,
  offeredToolName,
  ToolServerConfig,
  toolNeedsApproval,
} from '@parley/config';
import { AgentTool } from '../agent-tool';
import { McpRemoteTool, ToolServerCalls, ToolServerError } from './mcp-remote-tool';

/** Who Parley says it is in the MCP handshake. */
export const MCP_CLIENT_INFO = { name: 'parley-worker', version: '1.0.0' };

/** The bounds of one call (MCP_TOOL_TIMEOUT_MS, MCP_TOOL_RESULT_MAX_BYTES). */
export interface ToolCallBounds {
  timeoutMs: number;
  resultMaxBytes: number;
}

/** The pause before the next try to connect: 1 s doubling to a minute, with a little jitter so workers spread out. */
export function connectBackoffMs(failures: number): number {
  const base = Math.min(60_000, 1_000 * 2 ** Math.min(failures, 6));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/** Enough pages of tools for any real server; more is a server that keeps handing out cursors. */
const MAX_PAGES = 100;

/**
 * One of the operator's MCP tool servers, as a worker keeps it: connected over Streamable HTTP
 * (the official SDK's client, with the configured headers), its tools listed (every page) and
 * listed again on `notifications/tools/list_changed`. A server that cannot be reached is tried
 * again in the background with backoff, never holding up the worker; one whose connection is lost
 * keeps its last list on offer while it is reconnected (a call meanwhile is a tool error), so
 * that a blip does not change the tools, and the prompt cache, of every conversation.
 */
export class McpToolServer implements ToolServerCalls {
  readonly name: string;
  private client: Client | null = null;
  private offered: readonly AgentTool[] = [];
  private connecting: Promise<void> | null = null;
  private lastFailure = 'not connected yet';
  private readonly stopping = new AbortController();
  private readonly logger: Logger;

  constructor(
    private readonly config: ToolServerConfig,
    private readonly bounds: ToolCallBounds,
    private readonly backoffMs: (failures: number) => number = connectBackoffMs,
  ) {
    this.name = config.name;
    this.logger = new Logger(`ToolServer ${config.name}`);
  }

  /** The tools on offer now: the last list the server gave, allow-listed and named for the model. */
  tools(): readonly AgentTool[] {
    return this.offered;
  }

  /** Whether the server is connected now. */
  get connected(): boolean {
    return this.client !== null;
  }

  /** Connects in the background, trying again until it is connected or closed. */
  start(): void {
    if (this.stopping.signal.aborted || this.connecting || this.client) return;
    this.connecting = this.connectUntilUp().finally(() => (this.connecting = null));
  }

  /** Resolves once a connection is up (or the server is closed); for tests and a worker's first turn. */
  async untilConnected(): Promise<void> {
    await this.connecting;
  }

  /** Ends the session (a DELETE, as MCP asks of a client that is done, waited for a second at most) and the connection. */
  async close(): Promise<void> {
    this.stopping.abort();
    const client = this.client;
    this.client = null;
    if (!client) return;
    const transport = client.transport;
    if (transport instanceof StreamableHTTPClientTransport) {
      const ended = transport.terminateSession().catch(() => undefined);
      await Promise.race([ended, sleep(1_000)]);
    }
    await client.close().catch(() => undefined);
  }

  async call(tool: string, input: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    const deadline = Date.now() + this.bounds.timeoutMs;
    try {
      return await this.callOnce(tool, input, deadline, signal);
    } catch (e) {
      signal?.throwIfAborted();
      // the server forgot the session (it restarted) before it ran anything: a new session, one more try
      if (!sessionGone(e) || Date.now() >= deadline) throw this.toolServerError(e);
      await this.reconnectedBefore(deadline, signal);
      try {
        return await this.callOnce(tool, input, deadline, signal);
      } catch (again) {
        signal?.throwIfAborted();
        throw this.toolServerError(again);
      }
    }
  }

  /** Waits for the connection being made, at most until `deadline`. */
  private async reconnectedBefore(deadline: number, signal?: AbortSignal): Promise<void> {
    const done = new AbortController();
    const stop = signal ? AbortSignal.any([signal, done.signal]) : done.signal;
    const timeUp = sleep(Math.max(0, deadline - Date.now()), undefined, { signal: stop }).catch(() => undefined);
    await Promise.race([this.connecting, timeUp]);
    done.abort();
    signal?.throwIfAborted();
  }

  private async callOnce(
    tool: string,
    input: Record<string, unknown>,
    deadline: number,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    const client = this.client;
    if (!client) throw new ToolServerError(`it is not connected (${this.lastFailure}); Parley is connecting again`);
    const timeout = Math.max(1, deadline - Date.now());
    try {
      const result = await client.callTool({ name: tool, arguments: input }, undefined, {
        signal,
        timeout,
        maxTotalTimeout: timeout,
      });
      // a server of the 2024-10-07 protocol answers `toolResult` instead of content
      if ('toolResult' in result) return { content: [{ type: 'text', text: JSON.stringify(result.toolResult) }] };
      return result as CallToolResult;
    } catch (e) {
      if (lostConnection(e)) this.lost(client, describe(e));
      throw e;
    }
  }

  private async connectUntilUp(): Promise<void> {
    for (let failures = 0; !this.stopping.signal.aborted; failures++) {
      try {
        await this.connect();
        return;
      } catch (e) {
        if (this.stopping.signal.aborted) return;
        this.lastFailure = describe(e);
        const wait = this.backoffMs(failures);
        const say = `cannot connect to ${this.config.url} (${this.lastFailure}); trying again in ${Math.round(wait / 1000)} s`;
        // the first failure is news; the rest are the same news, repeated at debug
        if (failures === 0) this.logger.warn(say);
        else this.logger.debug(say);
        await sleep(wait, undefined, { signal: this.stopping.signal }).catch(() => undefined);
      }
    }
  }

  private async connect(): Promise<void> {
    const client = new Client(MCP_CLIENT_INFO, {
      listChanged: {
        // listed here, page by page, rather than by the SDK's refresh, which reads the first page only
        tools: { autoRefresh: false, debounceMs: 100, onChanged: () => void this.relist(client) },
      },
    });
    client.onerror = (e) => this.onTransportError(client, e);
    const transport = new StreamableHTTPClientTransport(new URL(this.config.url), {
      requestInit: { headers: this.config.headers },
    });
    const options = { timeout: this.bounds.timeoutMs, signal: this.stopping.signal };
    try {
      await client.connect(transport, options);
      const listed = await this.listAll(client);
      if (this.stopping.signal.aborted) throw new Error('closed');
      this.client = client;
      this.lastFailure = 'not connected';
      this.offer(listed);
      this.logger.log(`connected to ${this.config.url}: ${this.offered.length} tools on offer`);
    } catch (e) {
      await client.close().catch(() => undefined);
      throw e;
    }
  }

  /** Every page of the server's tools. */
  private async listAll(client: Client): Promise<Tool[]> {
    if (!client.getServerCapabilities()?.tools) {
      this.logger.warn('the server offers no tools (no tools capability)');
      return [];
    }
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const listed = await client.listTools(cursor === undefined ? undefined : { cursor }, {
        timeout: this.bounds.timeoutMs,
        signal: this.stopping.signal,
      });
      tools.push(...listed.tools);
      cursor = listed.nextCursor;
      if (cursor === undefined) return tools;
    }
    this.logger.warn(`the server listed more than ${MAX_PAGES} pages of tools: the rest are not offered`);
    return tools;
  }

  /** notifications/tools/list_changed: the new list replaces the old one; a failed listing keeps the old. */
  private async relist(client: Client): Promise<void> {
    if (client !== this.client) return;
    try {
      const listed = await this.listAll(client);
      if (client !== this.client) return;
      this.offer(listed);
      this.logger.log(`the tools changed: ${this.offered.length} on offer`);
    } catch (e) {
      this.logger.warn(`the tools changed, but listing them failed (${describe(e)}): the last list stays on offer`);
    }
  }

  /** What of the server's list the model is offered: the allow-listed tools whose names the model APIs take. */
  private offer(listed: Tool[]): void {
    const { tools: allowed } = this.config;
    const offered: AgentTool[] = [];
    for (const tool of listed) {
      if (allowed && !allowed.includes(tool.name)) continue;
      const name = offeredToolName(this.name, tool.name);
      if (!fitsModelToolName(name)) {
        this.logger.warn(
          `tool "${tool.name}" skipped: ${name} is not a name the model APIs take (${MODEL_TOOL_NAME.source})`,
        );
        continue;
      }
      if (tool.execution?.taskSupport === 'required') {
        this.logger.warn(`tool "${tool.name}" skipped: it runs only as a task, which Parley does not call`);
        continue;
      }
      const needsApproval = toolNeedsApproval(this.config, tool.name);
      if (tool.annotations?.destructiveHint === true && !needsApproval)
        this.logger.warn(`tool "${tool.name}" says it is destructive (destructiveHint) and runs without approval`);
      offered.push(new McpRemoteTool(this, tool, needsApproval, this.bounds.resultMaxBytes));
    }
    const missing = (allowed ?? []).filter((name) => !listed.some((t) => t.name === name));
    if (missing.length) this.logger.warn(`allow-listed but not listed by the server: ${missing.join(', ')}`);
    this.offered = offered;
  }

  /** The transport's own stream to the server (list_changed comes by it) gave up, or the session ended. */
  private onTransportError(client: Client, e: Error): void {
    if (!/Maximum reconnection attempts/.test(messageOf(e)) && !sessionGone(e))
      return void this.logger.debug(`transport: ${messageOf(e)}`);
    // after the failed call, if one failed, has seen its own error (closing now would fail it as "Connection closed")
    setImmediate(() => this.lost(client, describe(e)));
  }

  /** The connection is gone: its tools stay on offer while a new one is made in the background. */
  private lost(client: Client, why: string): void {
    if (client !== this.client) return;
    this.client = null;
    this.lastFailure = why;
    this.logger.warn(`lost the connection (${why}): connecting again`);
    void client.close().catch(() => undefined);
    this.start();
  }

  /** A failure in words the model may read: what went wrong, never the server's URL or headers. */
  private toolServerError(e: unknown): ToolServerError {
    if (e instanceof ToolServerError) return e;
    if (e instanceof McpError && e.code === ErrorCode.RequestTimeout)
      return new ToolServerError(`no answer within ${this.bounds.timeoutMs / 1000} s`);
    return new ToolServerError(describe(e));
  }
}

/** An HTTP 404 on a request that named a session: the server no longer knows it (MCP: start a new one). */
function sessionGone(e: unknown): boolean {
  return e instanceof StreamableHTTPError && e.code === 404;
}

/** A failure of the connection rather than of the call: the server is unreachable or forgot the session. */
function lostConnection(e: unknown): boolean {
  return sessionGone(e) || (e instanceof McpError && e.code === ErrorCode.ConnectionClosed) || isNetworkError(e);
}

/** fetch's own failure: the server cannot be reached, or the connection broke (a TypeError, maybe of another realm) */
function isNetworkError(e: unknown): boolean {
  return errorName(e) === 'TypeError' && /fetch failed/.test(messageOf(e));
}

/** A short account of a failure, without the server's URL (fetch's own messages carry none). */
function describe(e: unknown): string {
  if (isNetworkError(e)) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    // a system error's code (ECONNREFUSED) says it best; undici's codes (UND_ERR_SOCKET) less than their words
    const why = cause?.code && /^E[A-Z]+$/.test(cause.code) ? cause.code : (cause?.message ?? 'network error');
    return `cannot reach the server (${why})`;
  }
  const message = messageOf(e);
  return message.length > 300 ? `${message.slice(0, 299)}…` : message;
}

// errors are read by shape: fetch's come from Node's own realm, which `instanceof` does not see from a test's
function messageOf(e: unknown): string {
  const message = (e as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(e);
}

function errorName(e: unknown): string | undefined {
  const name = (e as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : undefined;
}
