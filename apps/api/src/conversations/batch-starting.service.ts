import { Injectable } from '@nestjs/common';
import { AuthUser } from '../auth/auth-user';
import { ReaderBudget } from '../usage/reader-budget';
import { BatchInput, ConversationsService } from './conversations.service';
import { PostRateLimiter } from './post-rate-limiter';
import { TurnEnqueuer } from './turn-enqueuer';

/**
 * Starting a batch, as a request does it: the reader's budget, the rate limit (each prompt is a
 * post), the batch started by ConversationsService, and each of its turns enqueued.
 */
@Injectable()
export class BatchStarting {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly budget: ReaderBudget,
    private readonly rateLimiter: PostRateLimiter,
    private readonly enqueuer: TurnEnqueuer,
  ) {}

  async start(user: AuthUser, conversationId: string, input: BatchInput): Promise<{ batchId: string }> {
    await this.budget.assertWithin(user); // before the rate limiter: a refused batch uses none of its posts
    await this.rateLimiter.consume(user.id, input.prompts.length);
    const { batchId, turns } = await this.conversations.startBatch(user.id, conversationId, {
      ...input,
      ...this.budget.inForce(user),
    });
    for (const t of turns) await this.enqueuer.turnPosted(t.conversationId, t.turnId);
    return { batchId };
  }
}
