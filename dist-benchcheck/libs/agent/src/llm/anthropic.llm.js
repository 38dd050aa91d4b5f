"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.isAbort = exports.AnthropicLlm = void 0;
const sdk_1 = __importDefault(require("@anthropic-ai/sdk"));
const llm_types_1 = require("./llm.types");
const EPHEMERAL = { type: 'ephemeral' };
/**
 * The Anthropic adapter on the official SDK (which reads ANTHROPIC_API_KEY/ANTHROPIC_BASE_URL and
 * retries 429/5xx/529 with backoff). Streams through messages.stream() so text deltas flow while
 * the model writes, and aborts with the turn's signal. Cache breakpoints (at most 4): the last
 * tool, the system prompt, the end of the earlier turns, and the end of the request.
 */
class AnthropicLlm {
    constructor(opts) {
        this.opts = opts;
        this.provider = 'anthropic';
        this.supportsTools = true;
        this.client = new sdk_1.default({
            apiKey: opts.apiKey,
            baseURL: opts.baseUrl,
            maxRetries: opts.maxRetries,
            timeout: 120_000,
        });
    }
    async chatWithTools(messages, tools, options) {
        const params = this.request(messages, tools, options);
        try {
            const stream = this.client.messages.stream(params, { signal: options.signal });
            if (options.onTextDelta)
                stream.on('text', (delta) => options.onTextDelta(delta));
            const final = await stream.finalMessage();
            return {
                content: final.content.flatMap((b) => b.type === 'text'
                    ? [{ type: 'text', text: b.text }]
                    : b.type === 'tool_use'
                        ? [{ type: 'tool_use', id: b.id, name: b.name, input: b.input }]
                        : []),
                stopReason: final.stop_reason ?? 'end_turn',
                usage: toUsage(final.usage),
                model: final.model,
            };
        }
        catch (e) {
            throw classify(e);
        }
    }
    /** The request body; exposed for tests of byte-identical prefixes. */
    request(messages, tools, options) {
        const toolParams = tools.map((t, i) => ({
            name: t.name,
            description: t.description,
            input_schema: t.inputSchema,
            ...(i === tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
        }));
        const system = [{ type: 'text', text: options.system, cache_control: EPHEMERAL }];
        const breakpoints = new Set([messages.length - 1]);
        if (options.prefixEnd !== undefined && options.prefixEnd >= 0)
            breakpoints.add(options.prefixEnd);
        return {
            model: this.opts.model,
            max_tokens: options.maxTokens ?? this.opts.maxTokens,
            system,
            messages: messages.map((m, i) => toParam(m, breakpoints.has(i))),
            ...(toolParams.length ? { tools: toolParams, tool_choice: { type: options.toolChoice ?? 'auto' } } : {}),
            stream: true,
        };
    }
}
exports.AnthropicLlm = AnthropicLlm;
function toParam(m, breakpoint) {
    const blocks = m.content.map((b) => {
        switch (b.type) {
            case 'text':
                return { type: 'text', text: b.text };
            case 'tool_use':
                return { type: 'tool_use', id: b.id, name: b.name, input: b.input };
            case 'tool_result':
                return {
                    type: 'tool_result',
                    tool_use_id: b.toolUseId,
                    content: b.content,
                    ...(b.isError ? { is_error: true } : {}),
                };
        }
    });
    if (breakpoint && blocks.length)
        blocks[blocks.length - 1] = { ...blocks[blocks.length - 1], cache_control: EPHEMERAL };
    return { role: m.role, content: blocks };
}
function toUsage(u) {
    return {
        inputTokens: u.input_tokens ?? 0,
        outputTokens: u.output_tokens ?? 0,
        cacheReadInputTokens: u.cache_read_input_tokens ?? 0,
        cacheCreationInputTokens: u.cache_creation_input_tokens ?? 0,
    };
}
function classify(e) {
    if (e instanceof sdk_1.default.APIUserAbortError)
        return e;
    if (e instanceof sdk_1.default.APIConnectionError)
        return new llm_types_1.LlmError(e.message, 'llm_unreachable', true);
    if (e instanceof sdk_1.default.APIError) {
        const status = e.status ?? 0;
        const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
        const code = status === 529 ? 'llm_overloaded' : status === 429 ? 'llm_rate_limited' : `llm_http_${status}`;
        return new llm_types_1.LlmError(e.message, code, retryable);
    }
    return e instanceof Error ? e : new Error(String(e));
}
const isAbort = (e) => e instanceof sdk_1.default.APIUserAbortError || e?.name === 'AbortError';
exports.isAbort = isAbort;
//# sourceMappingURL=anthropic.llm.js.map