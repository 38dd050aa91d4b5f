import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { MODEL_TABLE, PriceTable } from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { assertVisible, BatchVia } from '@parley/conversation';
import { AuthUser } from '../auth/auth-user';
import { bookReaderOf } from '../books/book-permissions';
import { invalid } from '../http/problem.exception';
import { RateLimits } from '../rate-limits/rate-limits';
import { ReaderBudget } from '../usage/reader-budget';
import { ApiConversationFolds } from './api-conversation-folds';
import { assertMessageText, providerOf } from './conversation-limits';
import { ConversationForking } from './conversation-forking';
import { ConversationWrites } from './conversation-writes';
import { MessagePosting } from './message-posting.service';
import { TurnEnqueuer } from './turn-enqueuer';

/** A batch to start: its prompts, how they are answered, and through which API. */
export interface BatchInput {
  prompts: string[];
  mode: 'sequential' | 'independent';
  via?: BatchVia;
}

/**
 * POST …/batches (StartBatch): the reader's budget, the rate limits (the batch, and each prompt as a post), the
 * batch recorded, and each of its turns enqueued. `sequential` posts the prompts as this
 * conversation's next turns, in order (each sees the answers before it); `independent` forks the
 * conversation once per prompt at its current version and posts the prompt there, so each is
 * answered against the same history, concurrently. Either way BatchStarted goes to this conversation.
 */
@Injectable()
export class BatchStarting {
  constructor(
    private readonly folds: ApiConversationFolds,
    private readonly writes: ConversationWrites,
    private readonly forking: ConversationForking,
    private readonly posting: MessagePosting,
    private readonly budget: ReaderBudget,
    private readonly rateLimits: RateLimits,
    private readonly enqueuer: TurnEnqueuer,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(MODEL_TABLE) private readonly prices: PriceTable,
  ) {}

  async start(user: AuthUser, conversationId: string, input: BatchInput): Promise<{ batchId: string }> {
    this.assertBatchAllowed(input);
    const { state } = await this.folds.load(conversationId);
    assertVisible(state, user.id);
    const via = input.via ?? 'messages';
    const provider = providerOf(this.config, this.prices, state.policy.model);
    if (via === 'message-batches' && provider !== 'anthropic')
      throw invalid('via', `message-batches needs an Anthropic model (this conversation's runs on ${provider})`);
    await this.budget.assertWithin(user); // before the rate limits: a refused batch uses none of its posts
    await this.rateLimits.consume('batches', user.id);
    await this.rateLimits.consume('posts', user.id, input.prompts.length);
    const { budgetUsdPerMonth } = this.budget.inForce(user);
    const { catalogue } = bookReaderOf(user);
    const batchId = randomUUID();
    const items =
      input.mode === 'sequential'
        ? input.prompts.map((prompt) => ({ prompt, conversationId, turnId: randomUUID(), messageId: randomUUID() }))
        : await Promise.all(
            input.prompts.map(async (prompt) => {
              const forkId = await this.forking.forkForBatch(user, conversationId, state.version);
              const batch = { batchId, conversationId, ...(via === 'message-batches' ? { via } : {}) };
              const posted = await this.posting.record(
                user.id,
                forkId,
                { content: prompt, multitask: 'enqueue', batch, budgetUsdPerMonth, catalogue },
                {},
              );
              return { prompt, conversationId: forkId, turnId: posted.turnId, messageId: posted.messageId };
            }),
          );
    await this.writes.execute(conversationId, {
      type: 'StartBatch',
      userId: user.id,
      batchId,
      mode: input.mode,
      via,
      items,
      ...(budgetUsdPerMonth !== undefined ? { budgetUsdPerMonth } : {}),
      catalogue,
    });
    for (const t of items) await this.enqueuer.turnPosted(t.conversationId, t.turnId);
    return { batchId };
  }

  /** What is refused before anything is read: an independent batch forks a conversation per prompt. */
  private assertBatchAllowed(input: BatchInput): void {
    const via = input.via ?? 'messages';
    if (via === 'message-batches' && input.mode !== 'independent')
      throw invalid(
        'via',
        'message-batches answers independent batches only: a sequential turn waits on the one before',
      );
    input.prompts.forEach((p, i) => assertMessageText(this.config, p, `prompts.${i}`, 'a prompt'));
  }
}
