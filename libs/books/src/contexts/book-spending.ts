import { callOverBudget, PriceTable, worstCaseUsd } from '@parley/agent';
import { Usage } from '@parley/conversation';
import { deterministicId } from '@parley/event-store';
import { BudgetReservations, UsageLedger } from '@parley/read-models';
import { Pool } from 'pg';
import { CONTEXT_INSTRUCTIONS, CONTEXT_ROLE } from './contextual-prompt';
import { ContextsRepository } from './contexts.repository';

/** A contextualisation ends within minutes; a reservation its crashed process left stops counting after this. */
const RESERVATION_TTL_MS = 30 * 60_000;

/** A passage's request as the budget sees it: the model, the book's prefix, the passage, max_tokens. */
export interface ContextCallRequest {
  model: string;
  prefix: string;
  passage: string;
  maxTokens: number;
}

/** A model call contextual retrieval made for a book: the provider's message id, model and usage. */
export interface ContextCall {
  messageId: string;
  model: string;
  usage: Usage;
}

/**
 * What contextual retrieval spends is the uploader's, as a turn's is the reader's: each model call
 * reserves its worst case against their monthly budget (recorded with the upload, else
 * BUDGET_USD_PER_MONTH) before it is made, beside their calls in flight, and the reservation is
 * settled with the call's line in the usage ledger when it answers.
 */
export class BookSpending {
  private readonly reservations: BudgetReservations;
  private readonly ledger: UsageLedger;

  constructor(
    pool: Pick<Pool, 'query' | 'connect'>,
    private readonly repo: ContextsRepository,
    private readonly serverLimitUsd: number | null,
    private readonly prices: PriceTable,
  ) {
    this.reservations = new BudgetReservations(pool);
    this.ledger = new UsageLedger(pool);
  }

  /**
   * The call's reservation (undefined: no budget, or a book that is gone: nothing to hold), or
   * LlmError `budget_exceeded` when its worst case does not fit what is left.
   */
  async reserve(bookId: string, call: ContextCallRequest, now = new Date()): Promise<string | undefined> {
    const payer = await this.repo.payerOf(bookId);
    // without a budget of their own the uploader may still be held by their tenant admin's
    const limitUsd = payer?.budgetUsdPerMonth ?? this.serverLimitUsd;
    if (!payer) return undefined;
    // worked out only when a budget holds: the prompt is the whole book
    const usd = () =>
      worstCaseUsd(
        {
          model: call.model,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: call.prefix },
                { type: 'text', text: call.passage + CONTEXT_INSTRUCTIONS },
              ],
            },
          ],
          tools: [],
          options: { system: CONTEXT_ROLE },
          maxTokens: call.maxTokens,
        },
        this.prices,
      );
    const reserved = await this.reservations.reserve(
      { ownerId: payer.ownerId, limitUsd, usd, bookId, ttlMs: RESERVATION_TTL_MS },
      this.prices.costUsd,
      now,
    );
    if (reserved.kind === 'refused') throw callOverBudget(reserved.standing);
    return reserved.kind === 'reserved' ? reserved.id : undefined;
  }

  /** A reservation back unused: its call failed. */
  async release(reservation: string | undefined): Promise<void> {
    if (reservation) await this.reservations.release(reservation);
  }

  /** The call's line in the ledger, once (by the provider's message id), under the book's uploader; its reservation settled with it. */
  async record(bookId: string, call: ContextCall, reservation?: string): Promise<void> {
    const payer = await this.repo.payerOf(bookId);
    await this.ledger.record(
      [
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
          cost_usd: this.prices.costUsd(call.model, call.usage),
          batched: false,
          at: new Date(),
        },
      ],
      reservation ? [reservation] : [],
    );
  }
}
