import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { inSpan } from '@parley/event-store';
import { AgentTool, ToolContext, ToolOutput } from './agent-tool';
import { LlmToolSpec } from '../llm/llm.types';

/** The tools the agent may call, by name. A tool that throws becomes an is_error result. */
export class ToolRegistry {
  private readonly byName = new Map<string, AgentTool>();

  constructor(tools: AgentTool[]) {
    for (const t of tools) {
      if (this.byName.has(t.name)) throw new Error(`two tools are named ${t.name}`);
      this.byName.set(t.name, t);
    }
  }

  /** Whether a call of this tool waits for the reader's approval before it runs. */
  needsApproval(name: string): boolean {
    return this.byName.get(name)?.needsApproval === true;
  }

  specsFor(ctx: ToolContext): LlmToolSpec[] {
    return [...this.byName.values()]
      .filter((t) => t.availableFor(ctx))
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  }

  /** Runs one call in an `execute_tool <name>` span (GenAI semantic conventions); `callId`: the model's id of the call. */
  run(name: string, input: unknown, ctx: ToolContext, callId?: string): Promise<ToolOutput> {
    const attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      'gen_ai.tool.type': 'function',
      ...(callId ? { 'gen_ai.tool.call.id': callId } : {}),
    };
    return inSpan(`execute_tool ${name}`, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
      const out = await this.runTool(name, input, ctx);
      if (out.isError) {
        span.setAttribute('error.type', 'tool_error');
        span.setStatus({ code: SpanStatusCode.ERROR, message: out.content.slice(0, 200) });
      }
      return out;
    });
  }

  private async runTool(name: string, input: unknown, ctx: ToolContext): Promise<ToolOutput> {
    const tool = this.byName.get(name);
    if (!tool || !tool.availableFor(ctx)) return { isError: true, content: `no tool named ${name} is available` };
    try {
      return await tool.run(input, ctx);
    } catch (e) {
      ctx.signal?.throwIfAborted();
      return { isError: true, content: `the tool failed: ${(e as Error)?.message ?? String(e)}` };
    }
  }
}
