import { AgentTool, ToolContext, ToolOutput, ToolRegistry, ToolSource } from '@parley/agent';
import { ToolOutcome, WorkerMetrics } from './worker-metrics';

/**
 * The agent's tools, each call timed by server, tool and outcome (the registry turns a tool's
 * throw into an is_error result). Parley's own tools are the server `parley`.
 */
export class MeteredToolRegistry extends ToolRegistry {
  constructor(
    tools: AgentTool[] | ToolSource[],
    private readonly metrics: WorkerMetrics,
    private readonly clock: () => number = () => performance.now(),
  ) {
    super(tools);
  }

  override async run(name: string, input: unknown, ctx: ToolContext, callId?: string): Promise<ToolOutput> {
    // the name comes from the model: one it made up (or a tool gone since) is not a label of its own
    const tool = this.tool(name);
    const labels = tool?.origin ?? { server: tool ? 'parley' : 'unknown', tool: tool ? name : 'unknown' };
    const started = this.clock();
    let outcome: ToolOutcome = 'aborted';
    try {
      const out = await this.runFound(tool, name, input, ctx, callId);
      outcome = out.isError ? 'error' : 'ok';
      return out;
    } finally {
      this.metrics.toolCall(labels, outcome, (this.clock() - started) / 1000);
    }
  }
}
