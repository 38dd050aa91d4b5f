import { budgetExceeded, costUsd } from '@parley/agent';
import { Usage } from '@parley/conversation';
import { deterministicId } from '@parley/event-store';
import { ReadModelQueries, standingThisMonth, UsageLedger } from '@parley/read-models';
import { Pool } from 'pg';
import { ContextsRepository } from './contexts.repository';

/** A model call contextual retrieval made for a book: the provider's message id, model and usage. */
export interface ContextCall {
  messageId: string;
  model: string;
  usage: Usage;
}

/**
 * What contextual retrieval spends is the uploader's, as a turn's is the reader's: each model call
 * is held to their monthly budget (recorded with the upload, else BUDGET_USD_PER_MONTH) before
 * it is made, and written to the usage ledger when it answers.
 */
export class BookSpending {
  private readonly queries: ReadModelQueries;
  private readonly ledger: UsageLedger;

  constructor(
    pool: Pick<Pool, 'query'>,
    private readonly repo: ContextsRepository,
    private readonly serverLimitUsd: number | null,
  ) {
    this.queries = new ReadModelQueries(async () => pool);
    this.ledger = new UsageLedger(pool);
  }

  /** LlmError `budget_exceeded` once the uploader has spent their budget; nothing to check for a book that is gone. */
  async assertCanCall(bookId: string, now = new Date()): Promise<void> {
    const payer = await this.repo.payerOf(bookId);
    const limitUsd = payer?.budgetUsdPerMonth ?? this.serverLimitUsd;
    if (!payer || limitUsd === null) return;
    const standing = await standingThisMonth(this.queries, payer.ownerId, limitUsd, costUsd, now);
    if (standing.spent) throw budgetExceeded(standing);
  }

  /** The call's line in the ledger, once (by the provider's message id), under the book's uploader. */
  async record(bookId: string, call: ContextCall): Promise<void> {
    const payer = await this.repo.payerOf(bookId);
    await this.ledger.record([
      {
        event_id: deterministicId('contextualization', bookId, call.messageId),
        conversation_id: null,
        version: null,
        owner_id: payer?.ownerId ?? null,
        turn_id: null,
        book_id: bookId,
        kind: 'contextualization',
        model: call.model,
        input_tokens: call.usage.inputTokens,
        output_tokens: call.usage.outputTokens,
        cache_read_input_tokens: call.usage.cacheReadInputTokens,
        cache_creation_input_tokens: call.usage.cacheCreationInputTokens,
        cost_usd: costUsd(call.model, call.usage),
        batched: false,
        at: new Date(),
      },
    ]);
  }
}
