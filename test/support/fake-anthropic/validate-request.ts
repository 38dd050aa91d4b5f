/**
 * The request checks of the Messages API that a product bug is likely to trip, with the
 * real API's messages, so a test fails on the fake the way production would fail.
 * Version-specific rules follow anthropic-version 2026-10-21 (what SDK 1.x sends).
 */

import { documentViolation, mixedCitations } from './documents';

export interface Violation {
  status: number;
  type: string;
  message: string;
}

type Headers = Record<string, string | string[] | undefined>;

export const CURRENT_VERSION = '2026-10-21';
const KNOWN_VERSIONS = new Set(['2023-06-01', CURRENT_VERSION]);

// Body params of MessageCreateParams in SDK 1.12, plus the beta ones the brief allows.
const ALLOWED_PARAMS = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'stream',
  'metadata',
  'stop_sequences',
  'thinking',
  'output_config',
  'service_tier',
  'cache_control',
  'container',
  'mcp_servers',
  'context_management',
  'diagnostics',
  'inference_geo',
  'speed',
]);
const SAMPLING_PARAMS = new Set(['temperature', 'top_p', 'top_k']); // removed in 2026-10-21
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;
const BLOCKS_BY_ROLE: Record<string, Set<string>> = {
  user: new Set(['text', 'image', 'document', 'search_result', 'tool_result', 'container_upload']),
  assistant: new Set([
    'text',
    'tool_use',
    'thinking',
    'redacted_thinking',
    'server_tool_use',
    'web_search_tool_result',
    'web_fetch_tool_result',
    'code_execution_tool_result',
    'bash_code_execution_tool_result',
    'text_editor_code_execution_tool_result',
    'tool_search_tool_result',
  ]),
  system: new Set(['text']),
};
const MAX_CACHE_BREAKPOINTS = 4;

class Invalid extends Error {}
function fail(message: string): never {
  throw new Invalid(message);
}

const isObject = (x: unknown): x is Record<string, any> => typeof x === 'object' && x !== null && !Array.isArray(x);

export function header(headers: Headers, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** Auth (401) and version (400) come before the body is looked at. */
export function checkHeaders(headers: Headers): Violation | null {
  const bearer = /^Bearer\s+\S+/i.test(header(headers, 'authorization') ?? '');
  if (!bearer && !header(headers, 'x-api-key')) {
    return {
      status: 401,
      type: 'authentication_error',
      message: 'Missing credentials: send an `Authorization: Bearer <key>` or an `x-api-key` header',
    };
  }
  const version = header(headers, 'anthropic-version');
  if (!version) return invalid('anthropic-version: header is required');
  if (!KNOWN_VERSIONS.has(version)) return invalid(`anthropic-version: "${version}" is not a valid version`);
  return null;
}

/** Returns the real API's 400 message for the first problem found, or null. */
export function validateBody(body: unknown, version: string = CURRENT_VERSION): string | null {
  try {
    checkBody(body, version >= CURRENT_VERSION);
    return null;
  } catch (e) {
    if (e instanceof Invalid) return e.message;
    throw e;
  }
}

function invalid(message: string): Violation {
  return { status: 400, type: 'invalid_request_error', message };
}

function checkBody(body: unknown, modern: boolean): void {
  if (!isObject(body)) fail('body: Input should be a valid dictionary');
  for (const key of Object.keys(body)) {
    const allowed = ALLOWED_PARAMS.has(key) || (!modern && SAMPLING_PARAMS.has(key));
    if (!allowed) fail(`${key}: Extra inputs are not permitted`);
  }
  if (body.model === undefined) fail('model: Field required');
  if (typeof body.model !== 'string' || body.model === '') fail('model: String should have at least 1 character');
  if (body.max_tokens === undefined) fail('max_tokens: Field required');
  if (!Number.isInteger(body.max_tokens)) fail('max_tokens: Input should be a valid integer');
  // 0 is valid since 2026: it pre-warms the prompt cache without generating.
  if (body.max_tokens < 0) fail('max_tokens: Input should be greater than or equal to 0');
  if (body.stream !== undefined && typeof body.stream !== 'boolean') fail('stream: Input should be a valid boolean');
  checkCacheControl(body.cache_control, 'cache_control');
  checkTools(body.tools, body.tool_choice);
  checkSystem(body.system);
  checkMessages(body.messages, modern);
  const mixed = mixedCitations(body);
  if (mixed) fail(mixed);
  const breakpoints = cacheControls(body);
  if (breakpoints.length > MAX_CACHE_BREAKPOINTS) {
    fail(
      `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints.length}.`,
    );
  }
  // the prompt is cached in order: an entry that lives an hour cannot follow one that lives 5 minutes
  const firstShort = breakpoints.findIndex((cc) => (cc.ttl ?? '5m') === '5m');
  if (firstShort >= 0 && breakpoints.slice(firstShort).some((cc) => cc.ttl === '1h')) {
    fail(
      "cache_control: a breakpoint with ttl '1h' may not come after one with ttl '5m': " +
        'longer-lived cache entries must appear before shorter-lived ones (tools, then system, then messages)',
    );
  }
}

function checkTools(tools: unknown, toolChoice: any): void {
  if (tools === undefined) {
    if (toolChoice !== undefined && toolChoice?.type !== 'none')
      fail('tool_choice: may only be specified while providing tools');
    return;
  }
  if (!Array.isArray(tools)) fail('tools: Input should be a valid list');
  const names = new Set<string>();
  tools.forEach((tool, i) => {
    if (!isObject(tool)) fail(`tools.${i}: Input should be a valid dictionary`);
    const custom = tool.type === undefined || tool.type === null || tool.type === 'custom';
    const at = custom ? `tools.${i}.custom` : `tools.${i}`;
    if (typeof tool.name !== 'string' || !NAME.test(tool.name)) {
      fail(`${at}.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
    }
    if (custom && (!isObject(tool.input_schema) || tool.input_schema.type !== 'object')) {
      fail(`${at}.input_schema.type: Input should be 'object'`);
    }
    checkCacheControl(tool.cache_control, at);
    if (names.has(tool.name)) fail('tools: Tool names must be unique.');
    names.add(tool.name);
  });
  if (toolChoice?.type === 'tool' && !names.has(toolChoice.name)) {
    fail(`tool_choice.name: Tool '${toolChoice.name}' not found in provided tools`);
  }
}

function checkSystem(system: unknown): void {
  if (system === undefined || typeof system === 'string') return;
  if (!Array.isArray(system)) fail('system: Input should be a valid string or a list of text blocks');
  system.forEach((block, j) => checkBlock(block, `system.${j}`, 'system', false));
}

function checkMessages(messages: unknown, modern: boolean): void {
  if (messages === undefined) fail('messages: Field required');
  if (!Array.isArray(messages)) fail('messages: Input should be a valid list');
  if (messages.length === 0) fail('messages: at least one message is required');
  messages.forEach((m, i) => checkMessage(m, i, i === messages.length - 1, modern));
  // SDK 1.x types allow `system` messages in the list; the conversation still opens with the user.
  if (messages.find((m) => m.role !== 'system')?.role !== 'user') {
    fail('messages: first message must use the "user" role');
  }
  checkToolPairing(messages);
}

function checkMessage(m: unknown, i: number, isLast: boolean, modern: boolean): void {
  const at = `messages.${i}`;
  if (!isObject(m)) fail(`${at}: Input should be a valid dictionary`);
  if (!Object.hasOwn(BLOCKS_BY_ROLE, m.role)) fail(`${at}.role: Input should be 'user', 'assistant' or 'system'`);
  for (const key of Object.keys(m)) {
    if (key !== 'role' && key !== 'content') fail(`${at}.${key}: Extra inputs are not permitted`);
  }
  if (typeof m.content !== 'string' && !Array.isArray(m.content)) {
    fail(`${at}.content: Input should be a valid string or a list of content blocks`);
  }
  const prefill = isLast && m.role === 'assistant';
  if (m.content.length === 0 && !prefill) {
    fail(`${at}: all messages must have non-empty content except for the optional final assistant message`);
  }
  const blocks = asBlocks(m.content);
  blocks.forEach((block, j) => checkBlock(block, `${at}.content.${j}`, m.role, modern));
  const last = blocks[blocks.length - 1];
  if (prefill && last?.type === 'text' && /\s$/.test(last.text)) {
    fail('messages: final assistant content cannot end with trailing whitespace');
  }
}

function checkBlock(block: unknown, at: string, role: string, modern: boolean): void {
  if (!isObject(block) || typeof block.type !== 'string') fail(`${at}: Input should be a content block with a 'type'`);
  if (modern && role === 'assistant' && block.type === 'document') {
    fail(`${at}: \`document\` blocks are not permitted in \`assistant\` messages in API version ${CURRENT_VERSION}`);
  }
  if (!BLOCKS_BY_ROLE[role].has(block.type))
    fail(`${at}: \`${block.type}\` blocks are not permitted in \`${role}\` messages`);
  checkCacheControl(block.cache_control, at);
  if (block.type === 'document') {
    const problem = documentViolation(block, at);
    if (problem) fail(problem);
  }
  const root = at.split('.')[0];
  const noCitations = modern && role === 'user';
  if (block.type === 'text') checkText(block, at, root, noCitations);
  if (block.type === 'tool_use') {
    if (typeof block.id !== 'string' || !TOOL_USE_ID.test(block.id))
      fail(`${at}.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
    if (typeof block.name !== 'string' || !NAME.test(block.name))
      fail(`${at}.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
    if (!isObject(block.input)) fail(`${at}.input: Input should be a valid dictionary`);
  }
  if (block.type === 'tool_result' || block.type === 'search_result') {
    if (block.type === 'tool_result' && typeof block.tool_use_id !== 'string')
      fail(`${at}.tool_use_id: Field required`);
    // Nested text (tool_result → search_result → text) gets the same checks, citations included.
    const nested = block.content === undefined ? [] : asBlocks(block.content);
    nested.forEach((inner, k) => {
      if (isObject(inner) && (inner.type === 'text' || inner.type === 'search_result')) {
        checkBlock(inner, `${at}.content.${k}`, 'user', modern);
      }
    });
  }
}

function checkText(block: Record<string, any>, at: string, root: string, noCitations: boolean): void {
  if (typeof block.text !== 'string') fail(`${at}.text: Input should be a valid string`);
  if (block.text === '') fail(`${root}: text content blocks must be non-empty`);
  if (block.text.trim() === '') fail(`${root}: text content blocks must contain non-whitespace text`);
  if (noCitations && Array.isArray(block.citations) && block.citations.length > 0) {
    fail(`${at}.citations: text blocks in \`user\` messages cannot carry citations in API version ${CURRENT_VERSION}`);
  }
}

function checkCacheControl(cc: unknown, at: string): void {
  if (cc === undefined || cc === null) return;
  if (!isObject(cc) || cc.type !== 'ephemeral') fail(`${at}.cache_control.type: Input should be 'ephemeral'`);
  if (cc.ttl !== undefined && cc.ttl !== '5m' && cc.ttl !== '1h')
    fail(`${at}.cache_control.ttl: Input should be '5m' or '1h'`);
}

/** Each tool_use is answered in the very next user message, results first; each result answers one. */
function checkToolPairing(messages: any[]): void {
  const seen = new Set<string>();
  messages.forEach((m, i) => {
    const blocks = asBlocks(m.content);
    if (m.role === 'assistant') {
      const ids: string[] = blocks.filter((b) => b.type === 'tool_use').map((b) => b.id);
      for (const id of ids) {
        if (seen.has(id)) fail(`messages.${i}: \`tool_use\` ids must be unique: ${id}`);
        seen.add(id);
      }
      const next = messages[i + 1];
      const answered = new Set(
        next?.role === 'user'
          ? asBlocks(next.content)
              .filter((b) => b.type === 'tool_result')
              .map((b) => b.tool_use_id)
          : [],
      );
      const missing = ids.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        fail(
          `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. ` +
            'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
        );
      }
    }
    if (m.role !== 'user') return;
    const prev = messages[i - 1];
    const asked = new Set(
      prev?.role === 'assistant'
        ? asBlocks(prev.content)
            .filter((b) => b.type === 'tool_use')
            .map((b) => b.id)
        : [],
    );
    const results = new Set<string>();
    blocks.forEach((b, j) => {
      if (b.type !== 'tool_result') return;
      if (!asked.has(b.tool_use_id) || results.has(b.tool_use_id)) {
        fail(
          `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. ` +
            'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
        );
      }
      results.add(b.tool_use_id);
    });
    const firstOther = blocks.findIndex((b) => b.type !== 'tool_result');
    const lastResult = blocks.map((b) => b.type).lastIndexOf('tool_result');
    if (firstOther !== -1 && lastResult > firstOther) {
      fail(
        `messages.${i}: \`tool_result\` block(s) must come first in the user message content, before any other block ` +
          `(found \`${blocks[firstOther].type}\` at content.${firstOther})`,
      );
    }
  });
}

/** The cache_control of every breakpoint in prompt order (tools, system, messages, nested blocks too), then the top-level one. */
function cacheControls(body: Record<string, any>): Array<{ ttl?: string }> {
  const found: Array<{ ttl?: string }> = [];
  const walk = (blocks: unknown): void => {
    if (!Array.isArray(blocks)) return;
    for (const b of blocks) {
      if (!isObject(b)) continue;
      if (b.cache_control) found.push(b.cache_control);
      walk(b.content);
      walk(b.source?.content); // a custom content document's blocks
    }
  };
  walk(body.tools);
  walk(body.system);
  for (const m of body.messages as any[]) walk(asBlocks(m.content));
  if (body.cache_control) found.push(body.cache_control);
  return found;
}

/** String content is shorthand for one text block ('' for none). */
export function asBlocks(content: unknown): any[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return Array.isArray(content) ? content : [];
}
