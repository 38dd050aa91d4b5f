"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.isComplete = void 0;
exports.turnsOf = turnsOf;
/** Folds a conversation's events into its turns, in posting order. */
function turnsOf(events) {
    const turns = [];
    const byId = new Map();
    for (const e of events) {
        switch (e.type) {
            case 'UserMessagePosted': {
                const t = {
                    turnId: e.data.turnId,
                    messageId: e.data.messageId,
                    content: e.data.content,
                    selectedText: e.data.selectedText,
                    postedAt: e.occurredAt,
                    iterations: [],
                };
                turns.push(t);
                byId.set(t.turnId, t);
                break;
            }
            case 'ToolInvoked': {
                const t = byId.get(e.data.turnId);
                if (!t || t.ending)
                    break;
                let it = t.iterations.find((i) => i.iteration === e.data.iteration);
                if (!it) {
                    const d = e.data;
                    it = {
                        iteration: e.data.iteration,
                        assistantText: '',
                        calls: [],
                        results: new Map(),
                        usage: d.usage,
                        model: d.model,
                    };
                    t.iterations.push(it);
                }
                if (e.data.assistantText)
                    it.assistantText = e.data.assistantText;
                it.calls.push({ toolUseId: e.data.toolUseId, name: e.data.name, input: e.data.input });
                break;
            }
            case 'ToolResultRecorded': {
                const t = byId.get(e.data.turnId);
                const it = t?.iterations.find((i) => i.calls.some((c) => c.toolUseId === e.data.toolUseId));
                if (!it)
                    break;
                const d = e.data;
                it.results.set(e.data.toolUseId, {
                    content: e.data.content,
                    isError: e.data.isError,
                    chunks: e.data.chunks ?? [],
                    citationStart: d.citationStart ?? 1,
                });
                break;
            }
            case 'AssistantReplied':
                endTurn(byId.get(e.data.turnId), { type: 'AssistantReplied', content: e.data.content });
                break;
            case 'TurnFailed':
            case 'TurnCancelled':
                endTurn(byId.get(e.data.turnId), { type: e.type });
                break;
            default:
                break;
        }
    }
    return turns;
}
function endTurn(t, ending) {
    if (t && !t.ending)
        t.ending = ending;
}
const isComplete = (it) => it.calls.every((c) => it.results.has(c.toolUseId));
exports.isComplete = isComplete;
//# sourceMappingURL=turn-records.js.map