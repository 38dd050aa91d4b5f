import { AgentCommand } from '../turn/decide-agent-step';
import { ConversationEvent } from '@parley/conversation';
import { NewEvent } from '@parley/event-store';

/**
 * Queue and job names are stored contracts (Redis keys, job records): string constants only.
 * A union ties each job name to its payload.
 */
export const AGENT_TURNS_QUEUE = 'agent-turns';

export const JobName = {
  RunTurn: 'run-turn',
} as const;

/** A paid-for step of a turn, kept in its job until its events are appended. */
export interface KeptStep {
  /** which step of which turn (stepKey): a kept step is used only for that very step */
  step: string;
  /** what the step did, decided again on the log when it is recorded (absent in jobs of releases before 0.3) */
  command?: AgentCommand;
  /** the events its one decision made, as they went out to be appended: what an erased conversation's ledger records of it */
  events: NewEvent<ConversationEvent>[];
}

export interface JobPayloads {
  /** traceparent: the span that queued it (W3C), so the run joins the turn's trace */
  [JobName.RunTurn]: { conversationId: string; turnId: string; kept?: KeptStep; traceparent?: string };
}

/**
 * One job per turn, so enqueueing twice (API fast path + dispatcher) is harmless. No ':' in it:
 * BullMQ reserves it in custom ids (its next major refuses them).
 */
export const runTurnJobId = (conversationId: string, turnId: string): string => `turn_${conversationId}_${turnId}`;
/** The id releases before 0.2 gave the same job: looked up too, so an upgrade enqueues no twin. */
export const legacyRunTurnJobId = (conversationId: string, turnId: string): string =>
  `turn:${conversationId}:${turnId}`;

/** Redis pub/sub channel on which cancel requests reach the worker running the turn. */
export const cancelChannel = (queuePrefix: string): string => `${queuePrefix}:turn-cancel`;

/** The same options wherever a turn is enqueued (first enqueue wins, by job id). */
export const RUN_TURN_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential' as const, delay: 1_000 },
  removeOnComplete: { age: 3_600, count: 10_000 },
  removeOnFail: { age: 24 * 3_600 },
};

/**
 * How long a queued turn (an earlier turn of its conversation is open) stays delayed before it
 * looks again: the sequencer promotes it when the turn before it ends, so this is only the net
 * for a promotion that never came (Redis away at that moment). The API queues a post's turn
 * delayed so from the start when turns are ahead of it (enqueueTurn's `turnsAhead`). The further
 * back in the queue, the longer: with a fixed 1 s poll every queued turn cost a job move and a
 * fold a second, so a service behind on its turns spent more on polling the further behind it fell.
 */
export function queuedTurnRecheckMs(behind: number): number {
  return Math.min(QUEUED_TURN_RECHECK_MAX_MS, QUEUED_TURN_RECHECK_MS * 2 ** Math.max(0, behind - 1));
}
export const QUEUED_TURN_RECHECK_MS = 2_000;
export const QUEUED_TURN_RECHECK_MAX_MS = 30_000;
