"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.priceOf = priceOf;
exports.costUsd = costUsd;
const PRICES = [
    ['claude-opus-4-1', { input: 15, output: 75 }],
    ['claude-opus-4-0', { input: 15, output: 75 }],
    ['claude-opus', { input: 5, output: 25 }],
    ['claude-sonnet', { input: 3, output: 15 }],
    ['claude-3-7-sonnet', { input: 3, output: 15 }],
    ['claude-haiku-4', { input: 1, output: 5 }],
    ['claude-3-5-haiku', { input: 0.8, output: 4 }],
    ['claude-haiku', { input: 1, output: 5 }],
    ['scripted', { input: 0, output: 0 }],
];
function priceOf(model) {
    return PRICES.find(([prefix]) => model.startsWith(prefix))?.[1];
}
/** Cost of a usage in USD, rounded to a millionth of a dollar; 0 for models not in the table. */
function costUsd(model, usage) {
    const p = priceOf(model);
    if (!p)
        return 0;
    const perToken = (usd) => usd / 1_000_000;
    const cost = usage.inputTokens * perToken(p.input) +
        usage.cacheCreationInputTokens * perToken(p.input * 1.25) +
        usage.cacheReadInputTokens * perToken(p.input * 0.1) +
        usage.outputTokens * perToken(p.output);
    return Math.round(cost * 1e6) / 1e6;
}
//# sourceMappingURL=pricing.js.map