import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { offeredToolName } from '@parley/config';
import { AgentTool, ToolContext, ToolOutput } from '../agent-tool';
import { remoteInputSchema } from './remote-input-schema';
import { cutToBytes, resultText } from './tool-result-text';

/** How a remote tool reaches its server: one call, which throws a ToolServerError in words the model may read. */
export interface ToolServerCalls {
  readonly name: string;
  call(tool: string, input: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult>;
}

/** A failed call to a tool server, said for the model: no URL, no header, no stack. */
export class ToolServerError extends Error {}

/**
 * One tool of an operator's MCP server as the agent calls it: named `<server>__<tool>`, described
 * and typed as the server lists it. An error result, a server that is down, a timeout or a broken
 * answer is a tool error the model reads, never a failed turn; the turn's cancel still cancels.
 */
export class McpRemoteTool implements AgentTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: AgentTool['inputSchema'];
  readonly origin: { server: string; tool: string };

  constructor(
    private readonly server: ToolServerCalls,
    listed: Tool,
    readonly needsApproval: boolean,
    private readonly resultMaxBytes: number,
  ) {
    this.name = offeredToolName(server.name, listed.name);
    this.origin = { server: server.name, tool: listed.name };
    this.description =
      listed.description?.trim() || listed.title || `${listed.name}, a tool of the operator's server ${server.name}`;
    this.inputSchema = remoteInputSchema(listed.inputSchema);
  }

  availableFor(): boolean {
    return true;
  }

  async run(input: unknown, ctx: ToolContext): Promise<ToolOutput> {
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      return this.failed('its input must be a JSON object');
    try {
      const result = await this.server.call(this.origin.tool, input as Record<string, unknown>, ctx.signal);
      const text = resultText(result, this.resultMaxBytes);
      return result.isError ? this.failed(text) : { content: text };
    } catch (e) {
      ctx.signal?.throwIfAborted();
      return this.failed(e instanceof ToolServerError ? e.message : 'an unexpected error');
    }
  }

  private failed(why: string): ToolOutput {
    return {
      isError: true,
      content: cutToBytes(`the tool server ${this.server.name} failed: ${why}`, this.resultMaxBytes),
    };
  }
}
