import { setTimeout as sleep } from 'node:timers/promises';
import { budgetExceeded, costUsd, TurnRecord } from '@parley/agent';
import { AppConfig } from '@parley/config';
import { EventStore, reached } from '@parley/event-store';
import { READ_MODELS_CONSUMER, ReadModelQueries, standingThisMonth } from '@parley/read-models';

/** How long a check waits for the ledger to reach the log's head, and how often it looks. */
const CATCH_UP_MS = 5_000;
const CATCH_UP_POLL_MS = 20;

/**
 * Holds each model call of a turn to its reader's monthly budget: the one recorded with the
 * question (their token's, or the server's then), else BUDGET_USD_PER_MONTH. The API checks at
 * the door; this check before every call is what bounds a batch, a long tool loop and turns
 * queued before the money ran out. The spend is the ledger's, read once the projection that
 * writes it has reached the log's head as it was when the check began (at most CATCH_UP_MS):
 * every call recorded before the check counts, so a budget is overshot by at most the reader's
 * calls in flight at that moment (docs/api.md, budgets).
 */
export class TurnBudget {
  private readonly queries: ReadModelQueries;

  constructor(
    private readonly store: EventStore,
    private readonly config: Pick<AppConfig, 'budgetUsdPerMonth'>,
  ) {
    this.queries = new ReadModelQueries(async () => store.pool);
  }

  /** LlmError `budget_exceeded` (not retryable) once the reader has spent the budget; no query without one. */
  async assertCanCall(ownerId: string | null, turn: TurnRecord, now = new Date()): Promise<void> {
    const limitUsd = turn.budgetUsdPerMonth ?? this.config.budgetUsdPerMonth;
    if (limitUsd === null || ownerId === null) return;
    await this.ledgerReachedHead();
    const standing = await standingThisMonth(this.queries, ownerId, limitUsd, costUsd, now);
    if (standing.spent) throw budgetExceeded(standing);
  }

  /** Waits (a little) for the ledger's projection to reach the log's head as it is now; then reads what is there. */
  private async ledgerReachedHead(): Promise<void> {
    const head = await this.store.head();
    const deadline = Date.now() + CATCH_UP_MS;
    while (!reached(await this.store.consumerCheckpoint(READ_MODELS_CONSUMER), head) && Date.now() < deadline) {
      await sleep(CATCH_UP_POLL_MS);
    }
  }
}
