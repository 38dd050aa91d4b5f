import { AgentTool } from './agent-tool';

/**
 * Where the registry finds tools: Parley's own (a fixed list) or an operator's MCP servers, whose
 * lists change while a worker runs. Asked afresh each time, so a changed list is offered from the
 * next model call on.
 */
export interface ToolSource {
  /** the tools on offer now */
  tools(): readonly AgentTool[];
  /**
   * Whether a call of `name` waits for the reader's approval even when the tool is not on offer
   * right now (its server is being reconnected): the source's configuration still says.
   */
  needsApproval?(name: string): boolean;
}

/** Tools that never change: Parley's own. Two of one name are a programming error. */
export class FixedTools implements ToolSource {
  private readonly list: readonly AgentTool[];

  constructor(tools: AgentTool[]) {
    const names = new Set<string>();
    for (const t of tools) {
      if (names.has(t.name)) throw new Error(`two tools are named ${t.name}`);
      names.add(t.name);
    }
    this.list = [...tools];
  }

  tools(): readonly AgentTool[] {
    return this.list;
  }
}
