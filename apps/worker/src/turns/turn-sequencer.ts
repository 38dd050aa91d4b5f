import { Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { Job, Queue } from 'bullmq';
import { AGENT_TURNS_QUEUE, enqueueTurn, enqueueTurns, findTurnJob, TurnToEnqueue, wakeTurn } from '@parley/agent';
import { pendingTurns } from '@parley/conversation';
import { ConversationFolds, FoldedConversation } from './conversation-folds';

/** Enqueues turns (idempotently, by job id) and wakes a conversation's next turn when one ends. */
@Injectable()
export class TurnSequencer {
  constructor(
    @InjectQueue(AGENT_TURNS_QUEUE) private readonly queue: Queue,
    private readonly folds: ConversationFolds,
  ) {}

  /** `traceparent`: the turn's, from its UserMessagePosted, so its job joins the turn's trace. */
  async enqueue(conversationId: string, turnId: string, traceparent?: string): Promise<void> {
    await enqueueTurn(this.queue, conversationId, turnId, traceparent);
  }

  /** The turns in order, as `enqueue` would each, in a round trip to Redis (per 500) instead of one a turn. */
  async enqueueAll(turns: TurnToEnqueue[]): Promise<void> {
    await enqueueTurns(this.queue, turns);
  }

  /** Enqueues the turn unless its job is still in Redis; true when it had to. */
  async ensureQueued(conversationId: string, turnId: string, traceparent?: string): Promise<boolean> {
    const job = await this.findJob(conversationId, turnId);
    if (job && (await job.isFailed())) {
      await job.retry('failed'); // it gave up without recording an ending (the database was down)
      return true;
    }
    if (job) return false;
    await this.enqueue(conversationId, turnId, traceparent);
    return true;
  }

  /** Whether the turn's job has yet to finish: running, or queued to run (again). */
  async isUnfinished(conversationId: string, turnId: string): Promise<boolean> {
    const job = await this.findJob(conversationId, turnId);
    if (!job) return false;
    return ['active', 'waiting', 'delayed', 'prioritized', 'waiting-children'].includes(await job.getState());
  }

  private findJob(conversationId: string, turnId: string) {
    return findTurnJob(this.queue, conversationId, turnId);
  }

  /**
   * After a queued turn's job went to delayed: if the turn it waited for has ended since it looked,
   * the promotion for it may have come while the job was still active (and found nothing delayed
   * to promote), so the job promotes itself. The ending is appended before the promoter looks, and
   * this fold is read after the job went to delayed, so one of the two always sees the other.
   */
  async promoteIfNext(conversationId: string, turnId: string, job: Job): Promise<void> {
    const { state } = await this.folds.load(conversationId);
    const [next] = pendingTurns(state);
    if (next?.turnId === turnId) await job.promote().catch(() => undefined);
  }

  /**
   * The conversation's oldest pending turn runs now instead of waiting out its delay. `folded`:
   * the conversation as of the ending just appended (a turn posted after it finds that ending
   * when it starts, so it needs no promotion); read from the log when not given.
   */
  async promoteNext(conversationId: string, folded?: Pick<FoldedConversation, 'state' | 'turns'>): Promise<void> {
    const { state, turns } = folded ?? (await this.folds.load(conversationId));
    const [next] = pendingTurns(state);
    if (!next) return;
    await wakeTurn(this.queue, conversationId, next.turnId, turns.find((t) => t.turnId === next.turnId)?.traceparent);
  }
}
