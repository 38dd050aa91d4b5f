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

  specsFor(ctx: ToolContext): LlmToolSpec[] {
    return [...this.byName.values()]
      .filter((t) => t.availableFor(ctx))
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  }

  async run(name: string, input: unknown, ctx: ToolContext): Promise<ToolOutput> {
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
