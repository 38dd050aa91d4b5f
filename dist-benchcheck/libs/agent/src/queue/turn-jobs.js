"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.RUN_TURN_JOB_OPTIONS = exports.cancelChannel = exports.runTurnJobId = exports.JobName = exports.AGENT_TURNS_QUEUE = void 0;
/**
 * Queue and job names are stored contracts (Redis keys, job records): string constants only.
 * A union ties each job name to its payload.
 */
exports.AGENT_TURNS_QUEUE = 'agent-turns';
exports.JobName = {
    RunTurn: 'run-turn',
};
/** One job per turn, so enqueueing twice (API fast path + dispatcher) is harmless. */
const runTurnJobId = (conversationId, turnId) => `turn:${conversationId}:${turnId}`;
exports.runTurnJobId = runTurnJobId;
/** Redis pub/sub channel on which cancel requests reach the worker running the turn. */
const cancelChannel = (queuePrefix) => `${queuePrefix}:turn-cancel`;
exports.cancelChannel = cancelChannel;
/** The same options wherever a turn is enqueued (first enqueue wins, by job id). */
exports.RUN_TURN_JOB_OPTIONS = {
    attempts: 5,
    backoff: { type: 'exponential', delay: 1_000 },
    removeOnComplete: { age: 3_600, count: 10_000 },
    removeOnFail: { age: 24 * 3_600 },
};
//# sourceMappingURL=turn-jobs.js.map