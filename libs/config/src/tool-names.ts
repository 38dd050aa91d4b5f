/**
 * How an operator's MCP tools are named to the model: `<server>__<tool>`. Both model APIs take
 * only tool names matching MODEL_TOOL_NAME; a server's name is chosen so that the first `__` of
 * an offered name always ends it (no `__` inside, no `_` at either end).
 */

/** What the Anthropic Messages API and the Chat Completions API accept as a tool's name. */
export const MODEL_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Between a server's name and its tool's name. */
export const TOOL_SERVER_SEPARATOR = '__';

/** A tool server's name: letters, digits and hyphens, with single underscores between them. */
export const TOOL_SERVER_NAME = /^[a-zA-Z0-9-]+(?:_[a-zA-Z0-9-]+)*$/;

/** The longest server name that leaves room for `__` and a one-character tool name within 64. */
export const TOOL_SERVER_NAME_MAX = 64 - TOOL_SERVER_SEPARATOR.length - 1;

/** The name the model sees for `tool` of `server`. */
export function offeredToolName(server: string, tool: string): string {
  return `${server}${TOOL_SERVER_SEPARATOR}${tool}`;
}

/** Whether both model APIs take `name` as a tool's name. */
export function fitsModelToolName(name: string): boolean {
  return MODEL_TOOL_NAME.test(name);
}

/** The server and tool an offered name stands for; null for a name without `__` (one of Parley's own). */
export function splitOfferedName(name: string): { server: string; tool: string } | null {
  const at = name.indexOf(TOOL_SERVER_SEPARATOR);
  if (at <= 0) return null;
  return { server: name.slice(0, at), tool: name.slice(at + TOOL_SERVER_SEPARATOR.length) };
}
