import type { AgentTool } from '../agent-tool';

type InputSchema = AgentTool['inputSchema'];

/**
 * A tool server's input schema as both model APIs take it: an object schema with `properties`
 * (MCP lets a server leave them out) and without `$schema`, which names the draft and nothing the
 * model needs. Anything else the server wrote is kept.
 */
export function remoteInputSchema(schema: { type: string; properties?: unknown; required?: unknown }): InputSchema {
  const { $schema: _draft, ...rest } = schema as Record<string, unknown>;
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : undefined;
  return { ...rest, type: 'object', properties, ...(required ? { required } : {}) };
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}
