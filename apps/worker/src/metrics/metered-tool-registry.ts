import { AgentTool, ToolContext, ToolOutput, ToolRegistry } from '@parley/agent';
import { ToolOutcome, WorkerMetrics } from './worker-metrics';

/** The agent's tools, each call timed by tool and outcome (the registry turns a tool's throw into an is_error result). */
export class MeteredToolRegistry extends ToolRegistry {
  private readonly names: Set<string>;

  constructor(
    tools: AgentTool[],
    private readonly metrics: WorkerMetrics,
    private readonly clock: () => number = () => performance.now(),
  ) {
    super(tools);
    this.names = new Set(tools.map((t) => t.name));
  }

  override async run(name: string, input: unknown, ctx: ToolContext, callId?: string): Promise<ToolOutput> {
    const started = this.clock();
    let outcome: ToolOutcome = 'aborted';
    try {
      const out = await super.run(name, input, ctx, callId);
      outcome = out.isError ? 'error' : 'ok';
      return out;
    } finally {
      // the name comes from the model: one it made up is not a label of its own
      this.metrics.toolCall(this.names.has(name) ? name : 'unknown', outcome, (this.clock() - started) / 1000);
    }
  }
}
