import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { inSpan } from '@parley/event-store';
import { AgentTool, ToolContext, ToolOutput } from './agent-tool';
import { FixedTools, ToolSource } from './tool-source';
import { LlmToolSpec } from '../llm/llm.types';

/** Code-point order: the same on every worker whatever its locale, so the offered tools (a cached prompt prefix) never reorder. */
const byName = (a: AgentTool, b: AgentTool) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The tools the agent may call, by name, from their sources (Parley's own first; a name taken by
 * an earlier source is not offered again). A tool that throws becomes an is_error result.
 */
export class ToolRegistry {
  private readonly sources: readonly ToolSource[];

  /** `tools`: Parley's own, or sources (Parley's own and the operator's MCP servers) */
  constructor(tools: AgentTool[] | ToolSource[]) {
    this.sources = isToolList(tools) ? [new FixedTools(tools)] : tools;
  }

  /** The tool offered under `name` now, if any. */
  tool(name: string): AgentTool | undefined {
    for (const source of this.sources) {
      const found = source.tools().find((t) => t.name === name);
      if (found) return found;
    }
    return undefined;
  }

  /** Whether a call of this tool waits for the reader's approval before it runs. */
  needsApproval(name: string): boolean {
    const tool = this.tool(name);
    if (tool) return tool.needsApproval === true;
    // not on offer right now (its server is being reconnected): its source's configuration says
    return this.sources.some((s) => s.needsApproval?.(name) === true);
  }

  specsFor(ctx: ToolContext): LlmToolSpec[] {
    return this.offered()
      .filter((t) => t.availableFor(ctx))
      .sort(byName)
      .map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  }

  /** Runs one call in an `execute_tool <name>` span (GenAI semantic conventions); `callId`: the model's id of the call. */
  run(name: string, input: unknown, ctx: ToolContext, callId?: string): Promise<ToolOutput> {
    return this.runFound(this.tool(name), name, input, ctx, callId);
  }

  /** `run`, for the tool already looked up under `name` (undefined: none is offered under it). */
  protected runFound(
    tool: AgentTool | undefined,
    name: string,
    input: unknown,
    ctx: ToolContext,
    callId?: string,
  ): Promise<ToolOutput> {
    const origin = tool?.origin;
    const attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      'gen_ai.tool.type': 'function',
      ...(callId ? { 'gen_ai.tool.call.id': callId } : {}),
      ...(origin ? { 'parley.tool.server': origin.server } : {}),
    };
    return inSpan(`execute_tool ${name}`, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
      const out = await this.runTool(tool, name, input, ctx);
      if (out.isError) {
        span.setAttribute('error.type', 'tool_error');
        span.setStatus({ code: SpanStatusCode.ERROR, message: out.content.slice(0, 200) });
      }
      return out;
    });
  }

  /** Every source's tools, each name once (the first source's). */
  private offered(): AgentTool[] {
    const seen = new Set<string>();
    const tools: AgentTool[] = [];
    for (const source of this.sources)
      for (const t of source.tools()) {
        if (seen.has(t.name)) continue;
        seen.add(t.name);
        tools.push(t);
      }
    return tools;
  }

  private async runTool(
    tool: AgentTool | undefined,
    name: string,
    input: unknown,
    ctx: ToolContext,
  ): Promise<ToolOutput> {
    if (!tool || !tool.availableFor(ctx)) return { isError: true, content: `no tool named ${name} is available` };
    try {
      return await tool.run(input, ctx);
    } catch (e) {
      ctx.signal?.throwIfAborted();
      return { isError: true, content: `the tool failed: ${(e as Error)?.message ?? String(e)}` };
    }
  }
}

function isToolList(tools: AgentTool[] | ToolSource[]): tools is AgentTool[] {
  return tools.every((t) => 'run' in t);
}
