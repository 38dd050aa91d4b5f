"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.addUsage = exports.zeroUsage = exports.LLM_CLIENT = exports.LlmError = void 0;
/** An LLM failure, classified so the turn can say whether trying again may help. */
class LlmError extends Error {
    constructor(message, code, retryable) {
        super(message);
        this.code = code;
        this.retryable = retryable;
        this.name = 'LlmError';
    }
}
exports.LlmError = LlmError;
exports.LLM_CLIENT = 'LLM_CLIENT';
const zeroUsage = () => ({
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
});
exports.zeroUsage = zeroUsage;
const addUsage = (a, b) => ({
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
});
exports.addUsage = addUsage;
//# sourceMappingURL=llm.types.js.map