"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.llmProvider = void 0;
const agent_1 = require("@parley/agent");
const config_1 = require("@parley/config");
exports.llmProvider = {
    provide: agent_1.LLM_CLIENT,
    inject: [config_1.CONFIG],
    useFactory: ({ llm }) => llm.provider === 'anthropic'
        ? new agent_1.AnthropicLlm({
            model: llm.model,
            maxTokens: llm.maxTokens,
            maxRetries: llm.maxRetries,
            apiKey: llm.apiKey,
            baseUrl: llm.baseUrl,
        })
        : new agent_1.ScriptedLlm(),
};
//# sourceMappingURL=llm.provider.js.map