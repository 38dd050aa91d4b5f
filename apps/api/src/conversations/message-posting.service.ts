import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AppConfig, CONFIG } from '@parley/config';
import { ConversationLogQueries } from '@parley/read-models';
import { AuthUser } from '../auth/auth-user';
import { bookReaderOf } from '../books/book-permissions';
import { RateLimits } from '../rate-limits/rate-limits';
import { ReaderBudget } from '../usage/reader-budget';
import { assertMessageText } from './conversation-limits';
import { ConversationWrites } from './conversation-writes';
import { answerTo, PostBody, postedEventId, postedFields, postIdFor, PostResult } from './post-idempotency';
import { TurnEnqueuer } from './turn-enqueuer';

/** What a post answers: the message, its turn, and where it landed in the stream. */
export type PostedMessage = Omit<PostResult, 'interrupted'>;

/**
 * A message to post: its body, what to do while a turn runs (?multitask=), and what is recorded
 * of the reader with it: the monthly budget in force (the worker holds each model call to it) and
 * the catalogue their token names (the worker lets the turn read only the books they may read).
 */
export type PostInput = PostBody & {
  multitask: 'enqueue' | 'reject' | 'interrupt';
  budgetUsdPerMonth?: number;
  catalogue?: string;
};

/**
 * POST …/messages (PostUserMessage): a retry of a post already made gets its first answer; a new
 * post is held to the reader's budget and rate limit, decided and appended, and its turn
 * enqueued; a turn it interrupted is signalled to the worker running it.
 */
@Injectable()
export class MessagePosting {
  constructor(
    private readonly writes: ConversationWrites,
    private readonly log: ConversationLogQueries,
    private readonly budget: ReaderBudget,
    private readonly rateLimits: RateLimits,
    private readonly enqueuer: TurnEnqueuer,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async post(
    user: AuthUser,
    conversationId: string,
    input: PostInput,
    opts: { idempotencyKey?: string; ifMatch?: number },
  ): Promise<PostedMessage> {
    const key = opts.idempotencyKey;
    // even at the rate limit or over budget (its turn may be what spent the budget)
    const earlier = key ? await this.earlierPost(user.id, conversationId, key, input) : undefined;
    if (!earlier) {
      // at once, so a post waits one round trip for both; over budget is said before over the rate
      const checks = await Promise.allSettled([
        this.budget.assertWithin(user),
        this.rateLimits.consume('posts', user.id),
      ]);
      for (const check of checks) if (check.status === 'rejected') throw check.reason;
    }
    const result =
      earlier ??
      (await this.record(
        user.id,
        conversationId,
        { ...input, ...this.budget.inForce(user), catalogue: bookReaderOf(user).catalogue },
        opts,
      ));
    const { interrupted = [], ...answer } = result;
    for (const turnId of interrupted) await this.enqueuer.turnCancelled(conversationId, turnId);
    await this.enqueuer.turnPosted(
      conversationId,
      result.turnId,
      this.writes.turnsAhead(conversationId, result.turnId),
    );
    return answer;
  }

  /**
   * The post's events, decided and appended (no budget, rate limit or enqueue: a batch's prompts
   * have had theirs). With an Idempotency-Key the ids derive from it: a repeat racing this one
   * finds (or makes) the same events, and ends with the first answer or a 422.
   */
  async record(
    userId: string,
    conversationId: string,
    input: PostInput,
    opts: { idempotencyKey?: string; ifMatch?: number },
  ): Promise<PostResult> {
    assertMessageText(this.config, input.content, 'content', 'content');
    const key = opts.idempotencyKey;
    const idFor = key ? postIdFor(userId, conversationId, key) : () => randomUUID();
    const turnId = idFor('turn');
    try {
      const appended = await this.writes.execute(
        conversationId,
        {
          type: 'PostUserMessage',
          userId,
          messageId: idFor('message'),
          turnId,
          multitask: input.multitask,
          ...postedFields(input),
          ...(input.budgetUsdPerMonth !== undefined ? { budgetUsdPerMonth: input.budgetUsdPerMonth } : {}),
          ...(input.catalogue !== undefined ? { catalogue: input.catalogue } : {}),
        },
        {
          ifMatch: opts.ifMatch,
          eventId: (e) => idFor(`event:${e.type}:${'turnId' in e.data ? e.data.turnId : ''}`),
          correlationId: turnId,
        },
      );
      const posted = answerTo(
        input,
        appended.find((e) => e.type === 'UserMessagePosted')!,
      );
      const interrupted = appended.filter((e) => e.type === 'TurnCancelled').map((e) => e.data.turnId);
      return { ...posted, interrupted };
    } catch (e) {
      // a repeat of this post, racing it, won (this one was then refused, e.g. multitask=reject)
      const raced = key ? await this.earlierPost(userId, conversationId, key, input) : undefined;
      if (raced) return raced;
      throw e;
    }
  }

  /**
   * The first answer to a post made with this Idempotency-Key, if there was one; 422 when that
   * post had another body (the IETF Idempotency-Key draft's rule).
   */
  async earlierPost(
    userId: string,
    conversationId: string,
    key: string,
    input: PostBody,
  ): Promise<PostResult | undefined> {
    const posted = await this.log.findPost(
      userId,
      conversationId,
      postedEventId(postIdFor(userId, conversationId, key)),
    );
    return posted && answerTo(input, posted);
  }
}
