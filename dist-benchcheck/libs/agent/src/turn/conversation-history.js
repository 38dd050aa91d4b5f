"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.estimateTokens = void 0;
exports.turnMessages = turnMessages;
exports.buildHistory = buildHistory;
const turn_records_1 = require("./turn-records");
/**
 * The LLM request history, rebuilt from events alone. The same events always give the same
 * messages (text and tool_use blocks in their original order with their original ids), so the
 * prefix of turn N+1 is byte-identical to turn N's request and the prompt cache hits.
 */
function turnMessages(turn, { current }) {
    const user = { role: 'user', content: userBlocks(turn) };
    const answered = turn.ending?.type === 'AssistantReplied';
    // a turn that failed or was cancelled keeps only its question: half a tool exchange is not valid history
    if (!current && !answered)
        return [user];
    const messages = [user];
    for (const it of turn.iterations) {
        if (!(0, turn_records_1.isComplete)(it))
            break;
        messages.push({
            role: 'assistant',
            content: [
                ...(it.assistantText.trim() ? [{ type: 'text', text: it.assistantText }] : []),
                ...it.calls.map((c) => ({ type: 'tool_use', id: c.toolUseId, name: c.name, input: c.input })),
            ],
        });
        messages.push({
            role: 'user',
            content: it.calls.map((c) => ({
                type: 'tool_result',
                toolUseId: c.toolUseId,
                content: it.results.get(c.toolUseId).content,
                isError: it.results.get(c.toolUseId).isError,
            })),
        });
    }
    if (turn.ending?.type === 'AssistantReplied' && turn.ending.content.trim()) {
        messages.push({ role: 'assistant', content: [{ type: 'text', text: turn.ending.content }] });
    }
    return messages;
}
function userBlocks(turn) {
    const blocks = [];
    if (turn.selectedText?.trim()) {
        blocks.push({
            type: 'text',
            text: `The reader highlighted this passage:\n<selected_text>\n${turn.selectedText}\n</selected_text>`,
        });
    }
    blocks.push({ type: 'text', text: turn.content });
    return blocks;
}
/** Rough token estimate (≈ 4 characters a token): enough to keep a budget. */
const estimateTokens = (messages) => Math.ceil(JSON.stringify(messages).length / 4);
exports.estimateTokens = estimateTokens;
/**
 * The history for the current turn: earlier turns, newest kept first within the token budget
 * (whole turns only, so no tool_use is separated from its tool_result), then the current turn.
 * Consecutive user messages (after a turn without an answer) are merged, results first.
 */
function buildHistory(turns, currentTurnId, budgetTokens) {
    const index = turns.findIndex((t) => t.turnId === currentTurnId);
    if (index < 0)
        throw new Error(`turn ${currentTurnId} is not in the conversation`);
    const current = turnMessages(turns[index], { current: true });
    let budget = budgetTokens - (0, exports.estimateTokens)(current);
    const earlier = [];
    for (let i = index - 1; i >= 0; i--) {
        const m = turnMessages(turns[i], { current: false });
        const cost = (0, exports.estimateTokens)(m);
        if (cost > budget)
            break;
        budget -= cost;
        earlier.unshift(m);
    }
    const prefix = mergeUserRuns(earlier.flat());
    const messages = mergeUserRuns([...prefix, ...current]);
    // the last message of the stable prefix, unless merging folded it into the current turn's first
    const prefixEnd = prefix.length > 0 &&
        messages.length > prefix.length - 1 &&
        messages[prefix.length - 1] === prefix[prefix.length - 1]
        ? prefix.length - 1
        : -1;
    return { messages, prefixEnd };
}
function mergeUserRuns(messages) {
    const out = [];
    for (const m of messages) {
        const last = out[out.length - 1];
        if (last && last.role === 'user' && m.role === 'user') {
            const blocks = [...last.content, ...m.content];
            // tool results must come first in a user message
            out[out.length - 1] = {
                role: 'user',
                content: [...blocks.filter((b) => b.type === 'tool_result'), ...blocks.filter((b) => b.type !== 'tool_result')],
            };
        }
        else {
            out.push(m);
        }
    }
    return out;
}
//# sourceMappingURL=conversation-history.js.map