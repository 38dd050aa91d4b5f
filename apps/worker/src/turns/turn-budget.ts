import { Inject, Injectable, Optional } from '@nestjs/common';
import { callOverBudget, CallRequest, MODEL_TABLE, PriceTable, TurnRecord, worstCaseUsd } from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { EventStore } from '@parley/event-store';
import { BudgetReservations, TenantBudgets } from '@parley/read-models';

/**
 * How long a reservation nothing settled keeps counting: a streamed call ends well within it, and
 * a call in a provider batch (up to 24 hours there) within the longer one. Only a process that
 * crashed between the call and its record leaves one that long; the turn's next line in the
 * ledger, written by whichever worker takes the turn over, settles it sooner.
 */
export const RESERVATION_TTL_MS = 30 * 60_000;
export const BATCH_RESERVATION_TTL_MS = 25 * 3_600_000;

/** Who pays for a turn's calls, and the budget they are held to; the version the step was planned on. */
export interface CallPayer {
  ownerId: string;
  /** the reader's budget recorded with the question, else the server's; null: none (a tenant admin's may hold) */
  limitUsd: number | null;
  turnId: string;
  atVersion: number;
}

/**
 * Holds each model call of a turn to its reader's monthly budget: the one recorded with the
 * question (their token's, or the server's then), else BUDGET_USD_PER_MONTH. The API checks at
 * the door; this reservation before every call is what bounds a batch, concurrent conversations,
 * a long tool loop and turns queued before the money ran out: the call's worst case is set aside
 * when it fits beside the month's spend and the calls in flight, and settled to what was billed
 * when the call's line reaches the ledger (docs/api.md, budgets).
 */
@Injectable()
export class TurnBudget {
  private readonly reservations: BudgetReservations;

  constructor(
    store: EventStore,
    @Inject(CONFIG) private readonly config: Pick<AppConfig, 'budgetUsdPerMonth'>,
    @Inject(MODEL_TABLE) private readonly prices: PriceTable,
    @Optional() admin?: TenantBudgets,
  ) {
    this.reservations = new BudgetReservations(store.pool, admin);
  }

  /**
   * The payer of a turn's calls planned on the log at `atVersion`; none for an erased reader. A
   * payer without a budget still reserves: their tenant's admin may have set one, or a tenant cap.
   */
  payerOf(ownerId: string | null, turn: TurnRecord, atVersion: number): CallPayer | undefined {
    if (ownerId === null) return undefined;
    const limitUsd = turn.budgetUsdPerMonth ?? this.config.budgetUsdPerMonth;
    return { ownerId, limitUsd, turnId: turn.turnId, atVersion };
  }

  /**
   * Sets the call's worst case aside (its reservation; undefined: no budget holds, nothing set
   * aside), or throws LlmError `budget_exceeded` (the call is not made).
   */
  async reserve(payer: CallPayer, request: CallRequest, { viaBatch = false } = {}): Promise<string | undefined> {
    const reserved = await this.reservations.reserve(
      {
        ownerId: payer.ownerId,
        limitUsd: payer.limitUsd,
        // worked out only when a budget holds: an estimate over the whole prompt, books included
        usd: () => worstCaseUsd(request, this.prices),
        turn: { turnId: payer.turnId, atVersion: payer.atVersion },
        ttlMs: viaBatch ? BATCH_RESERVATION_TTL_MS : RESERVATION_TTL_MS,
      },
      this.prices.costUsd,
    );
    if (reserved.kind === 'refused') throw callOverBudget(reserved.standing);
    return reserved.kind === 'reserved' ? reserved.id : undefined;
  }

  /** A reservation back unused: its call failed before the provider billed anything. */
  release(id: string): Promise<void> {
    return this.reservations.release(id);
  }
}
