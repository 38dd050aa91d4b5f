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
