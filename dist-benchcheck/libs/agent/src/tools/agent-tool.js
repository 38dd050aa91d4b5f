"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.AGENT_TOOLS = void 0;
/** Nest multi-provider token: every AgentTool provider registers under it. */
exports.AGENT_TOOLS = 'AGENT_TOOLS';
//# sourceMappingURL=agent-tool.js.map