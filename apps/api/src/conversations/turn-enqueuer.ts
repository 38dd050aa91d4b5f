import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { AGENT_TURNS_QUEUE, cancelChannel, enqueueTurn, wakeTurn } from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { RedisConnections } from '@parley/platform';
import { ErasedConversation } from '@parley/erasure';

/**
 * The API's fast path to the workers: enqueues posted turns and signals cancels. It is only an
 * optimisation: the worker's TurnDispatcher enqueues every posted turn from the log too (same job
 * id), so a post whose enqueue fails here (API crash, Redis blip) is still answered.
 */
@Injectable()
export class TurnEnqueuer {
  private readonly logger = new Logger(TurnEnqueuer.name);

  constructor(
    @InjectQueue(AGENT_TURNS_QUEUE) private readonly queue: Queue,
    private readonly redis: RedisConnections,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  /** `turnsAhead`: the conversation's turns still open before this one (its job then starts delayed). */
  async turnPosted(conversationId: string, turnId: string, turnsAhead = 0): Promise<void> {
    await this.bestEffort('enqueue', () => enqueueTurn(this.queue, conversationId, turnId, undefined, { turnsAhead }));
  }

  /**
   * The reader answered a tool call the turn waits for: its job, delayed while it waited, runs
   * now (queued anew should it be gone: the job id is the turn's, so never twice).
   */
  async approvalDecided(conversationId: string, turnId: string): Promise<void> {
    await this.bestEffort('approval wake-up', () => wakeTurn(this.queue, conversationId, turnId));
  }

  /** Tells the worker running the turn to abort its LLM call now. */
  async turnCancelled(conversationId: string, turnId: string): Promise<void> {
    await this.bestEffort('cancel signal', () =>
      this.redis.main.publish(cancelChannel(this.config.queuePrefix), JSON.stringify({ conversationId, turnId })),
    );
  }

  /** An erased conversation's turns would answer no one: their workers stop now. */
  async conversationErased({ conversationId, unendedTurns }: ErasedConversation): Promise<void> {
    for (const turnId of unendedTurns) await this.turnCancelled(conversationId, turnId);
  }

  private async bestEffort(what: string, work: () => Promise<unknown>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise((_, rej) => (timer = setTimeout(() => rej(new Error('timeout')), 2_000).unref()));
    await Promise.race([work(), timeout])
      .catch((e: Error) => this.logger.warn(`${what} failed: ${e.message}`))
      .finally(() => clearTimeout(timer)); // not a timer left pending per post
  }
}
