/**
 * Queue and job names are stored contracts (Redis keys, job records): string constants only.
 * A union ties each job name to its payload.
 */
export const AGENT_TURNS_QUEUE = 'agent-turns';

export const JobName = {
  RunTurn: 'run-turn',
} as const;

export interface JobPayloads {
  [JobName.RunTurn]: { conversationId: string; turnId: string };
}
export type JobOf<N extends keyof JobPayloads> = { name: N; data: JobPayloads[N] };

/** One job per turn, so enqueueing twice (API fast path + dispatcher) is harmless. */
export const runTurnJobId = (conversationId: string, turnId: string): string => `turn:${conversationId}:${turnId}`;

/** Redis pub/sub channel on which cancel requests reach the worker running the turn. */
export const cancelChannel = (queuePrefix: string): string => `${queuePrefix}:turn-cancel`;

/** The same options wherever a turn is enqueued (first enqueue wins, by job id). */
export const RUN_TURN_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential' as const, delay: 1_000 },
  removeOnComplete: { age: 3_600, count: 10_000 },
  removeOnFail: { age: 24 * 3_600 },
};
