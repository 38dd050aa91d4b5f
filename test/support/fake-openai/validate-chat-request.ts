/**
 * What the real Chat Completions API refuses with a 400 (`invalid_request_error`), in its words:
 * unknown parameters, roles, a `tool` message that answers no preceding `tool_calls`, an assistant
 * `tool_calls` left unanswered, `tool_choice` without `tools`, `stream_options` without `stream`,
 * `max_tokens` on a reasoning model. null when the body is one the API takes.
 */
export interface ChatViolation {
  message: string;
  param: string | null;
  code: string | null;
}

const KNOWN_PARAMS = new Set([
  'model',
  'messages',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'stream',
  'stream_options',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'n',
  'stop',
  'seed',
  'user',
  'metadata',
  'store',
  'prompt_cache_key',
  'reasoning_effort',
  'response_format',
  'frequency_penalty',
  'presence_penalty',
  'logprobs',
  'top_logprobs',
  'service_tier',
]);

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** OpenAI's reasoning models take max_completion_tokens only */
const REASONING_MODEL = /^(o\d|gpt-5)/;

const violation = (message: string, param: string | null = null, code: string | null = null): ChatViolation => ({
  message,
  param,
  code,
});

export function validateChatBody(body: any): ChatViolation | null {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    return violation('We could not parse the JSON body of your request.');
  for (const key of Object.keys(body))
    if (!KNOWN_PARAMS.has(key)) return violation(`Unrecognized request argument supplied: ${key}`);
  if (typeof body.model !== 'string' || !body.model)
    return violation('you must provide a model parameter', 'model', 'missing_required_parameter');
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return violation(
      "Invalid 'messages': empty array. Expected an array with minimum length 1.",
      'messages',
      'empty_array',
    );
  if (body.max_tokens !== undefined && REASONING_MODEL.test(body.model))
    return violation(
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      'max_tokens',
      'unsupported_parameter',
    );
  for (const p of ['max_tokens', 'max_completion_tokens'])
    if (body[p] !== undefined && (!Number.isInteger(body[p]) || body[p] < 1))
      return violation(`Invalid '${p}': integer below minimum value.`, p, 'integer_below_min_value');
  if (body.stream_options !== undefined && body.stream !== true)
    return violation("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
  const tools = validateTools(body);
  if (tools) return tools;
  return validateMessages(body.messages);
}

function validateTools(body: any): ChatViolation | null {
  if (body.tool_choice !== undefined && !(Array.isArray(body.tools) && body.tools.length))
    return violation(
      "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
      'tool_choice',
    );
  if (body.tools === undefined) return null;
  if (!Array.isArray(body.tools)) return violation("Invalid type for 'tools': expected an array.", 'tools');
  for (const [i, t] of body.tools.entries()) {
    if (t?.type !== 'function' || typeof t.function !== 'object')
      return violation(`Missing required parameter: 'tools[${i}].function'.`, `tools[${i}].function`);
    if (!TOOL_NAME.test(t.function.name ?? ''))
      return violation(
        `Invalid 'tools[${i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
        `tools[${i}].function.name`,
      );
    const params = t.function.parameters;
    if (params !== undefined && (typeof params !== 'object' || params.type !== 'object'))
      return violation(
        `Invalid schema for function '${t.function.name}': schema must be a JSON Schema of 'type: "object"'.`,
      );
  }
  const choice = body.tool_choice;
  if (choice !== undefined && !['none', 'auto', 'required'].includes(choice) && choice?.type !== 'function')
    return violation("Invalid value for 'tool_choice'.", 'tool_choice');
  return null;
}

function validateMessages(messages: any[]): ChatViolation | null {
  let open: Set<string> | null = null; // tool_call ids of the last assistant message still to be answered
  let openAt = -1;
  for (const [i, m] of messages.entries()) {
    if (!ROLES.has(m?.role))
      return violation(
        `Invalid value: '${m?.role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
        `messages[${i}].role`,
      );
    if (m.role !== 'tool' && open && open.size > 0)
      return violation(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')}`,
        `messages.[${openAt}].role`,
      );
    if (m.role === 'tool') {
      if (typeof m.tool_call_id !== 'string')
        return violation(`Missing required parameter: 'messages[${i}].tool_call_id'.`, `messages[${i}].tool_call_id`);
      if (!open || !open.has(m.tool_call_id))
        return violation(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${i}].role`,
        );
      open.delete(m.tool_call_id);
      if (!isContent(m.content)) return violation(`Invalid 'messages[${i}].content'.`, `messages[${i}].content`);
      continue;
    }
    open = null;
    if (m.role === 'assistant') {
      const calls = m.tool_calls;
      if (calls !== undefined) {
        if (!Array.isArray(calls) || calls.length === 0)
          return violation(`Invalid 'messages[${i}].tool_calls': empty array.`, `messages[${i}].tool_calls`);
        for (const [j, c] of calls.entries()) {
          if (typeof c?.id !== 'string' || c.type !== 'function' || typeof c.function?.name !== 'string')
            return violation(`Missing required parameter: 'messages[${i}].tool_calls[${j}].id'.`);
          if (typeof c.function.arguments !== 'string')
            return violation(
              `Invalid type for 'messages[${i}].tool_calls[${j}].function.arguments': expected a string, but got an object instead.`,
            );
        }
        open = new Set(calls.map((c: any) => c.id));
        openAt = i;
      }
      if (m.content === null && calls === undefined)
        return violation(`Invalid value for 'content': expected a string, got null.`, `messages.[${i}].content`);
      if (m.content !== null && m.content !== undefined && !isContent(m.content))
        return violation(`Invalid 'messages[${i}].content'.`, `messages[${i}].content`);
      continue;
    }
    if (!isContent(m.content) || (typeof m.content === 'string' ? false : m.content.length === 0))
      return violation(`Invalid 'messages[${i}].content': expected a string or an array of content parts.`);
  }
  if (open && open.size > 0)
    return violation(
      `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')}`,
      `messages.[${openAt}].role`,
    );
  return null;
}

const isContent = (c: unknown): boolean =>
  typeof c === 'string' || (Array.isArray(c) && c.every((p) => p?.type === 'text' && typeof p.text === 'string'));
