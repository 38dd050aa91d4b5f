import { Injectable } from '@nestjs/common';
import { AuthUser } from '../auth/auth-user';
import { ReaderBudget } from '../usage/reader-budget';
import { ConversationsService, PostInput, PostResult } from './conversations.service';
import { PostRateLimiter } from './post-rate-limiter';
import { TurnEnqueuer } from './turn-enqueuer';

/** What a post answers: the message, its turn, and where it landed in the stream. */
export type PostedMessage = Omit<PostResult, 'interrupted'>;

/**
 * Posting a message and cancelling a turn, as a request does them: a new post is held to the
 * reader's budget and rate limit, recorded by ConversationsService, and its turn enqueued; a
 * turn the post interrupted, or a cancel ended, is signalled to the worker running it.
 */
@Injectable()
export class MessagePosting {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly budget: ReaderBudget,
    private readonly rateLimiter: PostRateLimiter,
    private readonly enqueuer: TurnEnqueuer,
  ) {}

  async post(
    user: AuthUser,
    conversationId: string,
    input: PostInput,
    opts: { idempotencyKey?: string; ifMatch?: number },
  ): Promise<PostedMessage> {
    const key = opts.idempotencyKey;
    // as kept, or read beside the checks below, which do not depend on it: the post is decided on it
    const fold = this.conversations.foldForCommand(conversationId);
    fold.loaded?.catch(() => undefined); // a refused post leaves it unread; a post that reads it meets its error
    // a retry of a post already made is no new post: it gets its first answer, even at the rate
    // limit or over budget (its turn may be what spent the budget)
    const earlier = key ? await this.conversations.earlierPost(user.id, conversationId, key, input) : undefined;
    if (!earlier) {
      await this.budget.assertWithin(user);
      await this.rateLimiter.consume(user.id);
    }
    const posted = { ...input, ...this.budget.inForce(user) };
    const result = earlier ?? (await this.conversations.post(user.id, conversationId, posted, { ...opts, ...fold }));
    const { interrupted = [], ...answer } = result;
    for (const turnId of interrupted) await this.enqueuer.turnCancelled(conversationId, turnId);
    await this.enqueuer.turnPosted(conversationId, result.turnId);
    return answer;
  }

  /** TurnCancelled, and the cancel signal to its worker; a turn already ended is left as it is. */
  async cancel(
    userId: string,
    conversationId: string,
    turnId: string,
  ): Promise<{ turnId: string; cancelled: boolean }> {
    const appended = await this.conversations.cancelTurn(userId, conversationId, turnId);
    if (appended.length > 0) await this.enqueuer.turnCancelled(conversationId, turnId);
    return { turnId, cancelled: appended.length > 0 };
  }
}
