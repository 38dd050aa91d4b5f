"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.CITATION_BLOCK = void 0;
exports.nextStep = nextStep;
exports.citationStartFor = citationStartFor;
const turn_records_1 = require("./turn-records");
function nextStep(turns, turnId, maxIterations) {
    const index = turns.findIndex((t) => t.turnId === turnId);
    const turn = turns[index];
    if (!turn || turn.ending)
        return { kind: 'ended' };
    const earlier = turns.slice(0, index).find((t) => !t.ending);
    if (earlier)
        return { kind: 'wait', forTurnId: earlier.turnId };
    const last = turn.iterations[turn.iterations.length - 1];
    if (last && !(0, turn_records_1.isComplete)(last)) {
        return {
            kind: 'run-tools',
            iteration: last.iteration,
            calls: last.calls.filter((c) => !last.results.has(c.toolUseId)),
        };
    }
    const iteration = turn.iterations.length + 1;
    // the last allowed call may not use tools: it has to answer with what it has
    return { kind: 'call-llm', iteration, allowTools: iteration < maxIterations };
}
/** Citation numbers are unique within a turn: each tool call gets its own block of numbers. */
exports.CITATION_BLOCK = 10;
function citationStartFor(turn, toolUseId) {
    const calls = turn.iterations.flatMap((it) => it.calls.map((c) => c.toolUseId));
    const n = calls.indexOf(toolUseId);
    return (n < 0 ? calls.length : n) * exports.CITATION_BLOCK + 1;
}
//# sourceMappingURL=turn-plan.js.map