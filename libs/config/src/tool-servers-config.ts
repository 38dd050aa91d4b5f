import { z } from 'zod';
import { Env } from './env';
import { parseJsonSetting } from './json-setting';
import {
  fitsModelToolName,
  MODEL_TOOL_NAME,
  offeredToolName,
  TOOL_SERVER_NAME,
  TOOL_SERVER_NAME_MAX,
} from './tool-names';

/** One of the operator's MCP tool servers (MCP_TOOL_SERVERS; docs/tools.md). */
export interface ToolServerConfig {
  /** its key in MCP_TOOL_SERVERS: the model sees its tools as `<name>__<tool>` */
  name: string;
  /** its Streamable HTTP endpoint */
  url: string;
  /** sent with every request to it (an API key, say) */
  headers: Record<string, string>;
  /** the only tools of it offered to the model; null: every tool it lists */
  tools: string[] | null;
  /** which of its tools wait for the reader's approval before each call */
  approval: 'never' | 'always' | string[];
}

/** The operator's tools from MCP servers, and the bounds of one call. */
export interface ToolServersConfig {
  servers: ToolServerConfig[];
  /** the longest a call may take before it is a tool error (MCP_TOOL_TIMEOUT_MS) */
  timeoutMs: number;
  /** the most text of one result the model reads; the rest is cut with a note (MCP_TOOL_RESULT_MAX_BYTES) */
  resultMaxBytes: number;
}

/** A header's name as HTTP has it (a token), and a value without line breaks. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const serverName = z
  .string()
  .max(TOOL_SERVER_NAME_MAX, `a server's name is at most ${TOOL_SERVER_NAME_MAX} characters`)
  .regex(
    TOOL_SERVER_NAME,
    'a server name is letters, digits and hyphens, with single underscores between them (its tools are offered as <server>__<tool>)',
  );

const toolNames = z.array(z.string().min(1, 'a tool name is not empty'));

const toolServer = z
  .object({
    url: z
      .string()
      .refine(
        isHttpUrl,
        'must be the server’s Streamable HTTP URL (http: or https:), e.g. https://tools.example.com/mcp',
      ),
    headers: z
      .record(
        z.string(),
        z.string().refine((v) => !/[\r\n]/.test(v), 'a header value holds no line break'),
      )
      .superRefine((headers, ctx) => {
        for (const name of Object.keys(headers).filter((n) => !HEADER_NAME.test(n)))
          ctx.addIssue({ code: 'custom', path: [name], message: `"${name}" is not a header name (an HTTP token)` });
      })
      .optional(),
    tools: toolNames.optional(),
    approval: z
      .union([z.enum(['never', 'always']), toolNames], {
        error: 'must be "never", "always" or a list of tool names',
      })
      .optional(),
  })
  .strict();

function isHttpUrl(raw: string): boolean {
  try {
    return /^https?:$/.test(new URL(raw).protocol);
  } catch {
    return false;
  }
}

/** Names the operator wrote that the model could never be offered, or approvals of tools left out. */
function checkNames(name: string, server: z.infer<typeof toolServer>, ctx: z.RefinementCtx): void {
  const named = (field: 'tools' | 'approval', tools: string[]) =>
    tools.forEach((tool, i) => {
      const offered = offeredToolName(name, tool);
      if (!fitsModelToolName(offered))
        ctx.addIssue({
          code: 'custom',
          path: [name, field, i],
          message: `${offered} is not a tool name the model APIs take (${MODEL_TOOL_NAME.source})`,
        });
      else if (field === 'approval' && server.tools && !server.tools.includes(tool))
        ctx.addIssue({ code: 'custom', path: [name, field, i], message: `${tool} is not among this server's tools` });
    });
  named('tools', server.tools ?? []);
  if (Array.isArray(server.approval)) named('approval', server.approval);
}

// the names are checked here rather than as the record's keys, whose issues zod reports only as "Invalid key"
const toolServers = z.record(z.string(), toolServer).superRefine((servers, ctx) => {
  for (const [name, server] of Object.entries(servers)) {
    const badName = serverName.safeParse(name).error?.issues[0];
    if (badName) ctx.addIssue({ code: 'custom', path: [name], message: `"${name}": ${badName.message}` });
    else checkNames(name, server, ctx);
  }
});

/** MCP_TOOL_SERVERS: a JSON object, or the path of a file holding one; unset: no tool servers. */
export function parseToolServers(raw: string): ToolServerConfig[] {
  const servers = parseJsonSetting('MCP_TOOL_SERVERS', raw, toolServers);
  return Object.entries(servers).map(([name, s]) => ({
    name,
    url: s.url,
    headers: s.headers ?? {},
    tools: s.tools ?? null,
    approval: s.approval ?? 'never',
  }));
}

export function toolServersConfig(e: Env): ToolServersConfig {
  return {
    servers: e.MCP_TOOL_SERVERS ? parseToolServers(e.MCP_TOOL_SERVERS) : [],
    timeoutMs: e.MCP_TOOL_TIMEOUT_MS,
    resultMaxBytes: e.MCP_TOOL_RESULT_MAX_BYTES,
  };
}

/** Whether a call of `tool` (its name on its server) waits for the reader's approval. */
export function toolNeedsApproval(server: Pick<ToolServerConfig, 'approval'>, tool: string): boolean {
  return server.approval === 'always' || (Array.isArray(server.approval) && server.approval.includes(tool));
}
