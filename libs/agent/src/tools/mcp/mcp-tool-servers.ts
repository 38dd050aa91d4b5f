import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { AppConfig, CONFIG, splitOfferedName, toolNeedsApproval } from '@parley/config';
import { AgentTool } from '../agent-tool';
import { ToolSource } from '../tool-source';
import { McpToolServer } from './mcp-tool-server';

/**
 * The operator's MCP tool servers (MCP_TOOL_SERVERS) as one source of the agent's tools. A worker
 * that runs turns connects to each when it starts, in the background: its readiness never waits
 * for a tool server, and a server that is down is tried again until it answers.
 */
@Injectable()
export class McpToolServers implements ToolSource, OnModuleInit, OnApplicationShutdown {
  private readonly servers: McpToolServer[];

  constructor(@Inject(CONFIG) private readonly config: AppConfig) {
    const { servers, timeoutMs, resultMaxBytes } = config.toolServers;
    this.servers = servers.map((s) => new McpToolServer(s, { timeoutMs, resultMaxBytes }));
  }

  onModuleInit(): void {
    // only a worker that runs turns calls tools
    if (this.config.worker.agentEnabled) for (const s of this.servers) s.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.close()));
  }

  tools(): readonly AgentTool[] {
    return this.servers.flatMap((s) => s.tools());
  }

  /** From the configuration alone, so a tool whose server is being reconnected still waits for approval. */
  needsApproval(name: string): boolean {
    const split = splitOfferedName(name);
    const server = split && this.config.toolServers.servers.find((s) => s.name === split.server);
    return !!server && toolNeedsApproval(server, split.tool);
  }
}
