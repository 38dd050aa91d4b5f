import { randomUUID } from 'node:crypto';
import { Pool, PoolClient } from 'pg';
import { usageByModelOf, usageSql, USAGE_BY_MODEL_SQL } from './read-model.queries';
import { tenantLinesSql } from './tenant-ledger';
import { TenantBudgets } from './tenant-budgets';
import { MonthStanding, monthOf, PriceOf, usageReport } from './usage-report';

/** A model call about to be made, and the most it may cost its payer. */
export interface ReservationRequest {
  ownerId: string;
  /** the reader's budget recorded with the question or upload (their token's, else the server's); null: none */
  limitUsd: number | null;
  /**
   * the call's worst case: its prompt at the dearest input price, plus max_tokens of output; a
   * function when working it out costs (an estimate over the whole prompt), called only when a
   * budget holds
   */
  usd: number | (() => number);
  /** a turn's call, planned on the conversation at `atVersion`: the line recording it comes later */
  turn?: { turnId: string; atVersion: number };
  /** a book's contextualisation (settled by `UsageLedger.record(rows, [id])`) */
  bookId?: string;
  /** after this long a reservation nothing settled (its process crashed) stops counting */
  ttlMs: number;
}

/** Where the payer stands: spent this month (the ledger), set aside for calls in flight, and this call's worst case. */
export interface ReservationStanding extends MonthStanding {
  reservedUsd: number;
  callUsd: number;
  /** the tenant whose cap this is, when the tenant's readers together would exceed it; else the reader's budget */
  tenant?: string;
}

/** Reserved (its id), refused (where the payer stands), or nothing to reserve against: no budget and no tenant cap. */
export type Reservation =
  { kind: 'reserved'; id: string } | { kind: 'unlimited' } | { kind: 'refused'; standing: ReservationStanding };

/**
 * The money set aside for model calls in flight (`budget_reservations`). A call is admitted when
 * the month's ledger, the reservations still open and its own worst case fit the limit, and its
 * reservation is written in the same transaction, under a per-reader advisory lock: whatever the
 * number of workers, replicas and concurrent calls, the checks of one reader come one at a time.
 * The ledger and the reservations are read in one statement (one snapshot), so a call whose line
 * and settlement land meanwhile counts once. Settling is the ledger's: see SETTLE_RESERVATIONS_SQL.
 * A tenant admin's budgets hold here too (TenantBudgets): the reader's, over the one requested;
 * the tenant's cap, checked against all its readers' ledger and reservations under the tenant's
 * lock, taken before the reader's.
 */
export class BudgetReservations {
  /** `admin`: the process's TenantBudgets, which keeps the limits it read; else they are read each time. */
  constructor(
    private readonly pool: Pick<Pool, 'connect' | 'query'>,
    private readonly admin: Pick<TenantBudgets, 'limitsOf'> = new TenantBudgets(pool),
  ) {}

  async reserve(request: ReservationRequest, price: PriceOf, now = new Date()): Promise<Reservation> {
    // before the transaction: without any budget (the common deployment) a call costs no more than this
    const { tenant, tenantUsd, readerUsd } = await this.admin.limitsOf(request.ownerId);
    // the budget the reader's tenant admin set is the operator's word: it holds over the token's
    const limitUsd = readerUsd ?? request.limitUsd;
    if (limitUsd === null && tenantUsd === null) return { kind: 'unlimited' };
    const usd = typeof request.usd === 'function' ? request.usd() : request.usd;
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // always the tenant's lock before the reader's (one order, no deadlock): a tenant's checks come one at a time
      if (tenant !== null && tenantUsd !== null)
        await client.query(ADVISORY_LOCK_SQL, ['parley-tenant-budget:' + tenant]);
      // a 64-bit key per reader; another lock of the same key can only be another check of theirs
      await client.query(ADVISORY_LOCK_SQL, ['parley-budget:' + request.ownerId]);
      if (limitUsd !== null) {
        const reader = { kind: 'reader', id: request.ownerId } as const;
        const standing = await this.standing(client, reader, limitUsd, usd, price, now);
        if (standing.spent) {
          await client.query('ROLLBACK');
          return { kind: 'refused', standing };
        }
      }
      if (tenant !== null && tenantUsd !== null) {
        const standing = await this.standing(client, { kind: 'tenant', id: tenant }, tenantUsd, usd, price, now);
        if (standing.spent) {
          await client.query('ROLLBACK');
          return { kind: 'refused', standing };
        }
      }
      const id = randomUUID();
      await client.query(
        `INSERT INTO budget_reservations (id, owner_id, turn_id, at_version, book_id, usd, expires_at, tenant)
         VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7), $8)`,
        [
          id,
          request.ownerId,
          request.turn?.turnId ?? null,
          request.turn?.atVersion ?? null,
          request.bookId ?? null,
          usd,
          request.ttlMs / 1000,
          tenant,
        ],
      );
      await client.query('COMMIT');
      return { kind: 'reserved', id };
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  }

  /** Gives a reservation back unused: its call was never made. */
  async release(id: string): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('DELETE FROM budget_reservations WHERE id = $1', [id]);
    } finally {
      client.release();
    }
  }

  /**
   * Where a budget stands this month: the ledger's lines it covers and the open reservations of
   * its readers (one reader's, or a tenant's readers together), as one snapshot; expired
   * reservations are cleared on the way.
   */
  private async standing(
    client: PoolClient,
    holder: BudgetHolder,
    limitUsd: number,
    callUsd: number,
    price: PriceOf,
    now: Date,
  ): Promise<ReservationStanding> {
    const month = monthOf(now);
    const { column, usage, params } = HOLDERS[holder.kind];
    await client.query(`DELETE FROM budget_reservations WHERE ${column} = $1 AND expires_at <= now()`, [holder.id]);
    const { rows } = await client.query(
      // a reservation whose line is in the ledger (written by a release that does not settle, mid-upgrade) counts no more
      `SELECT (SELECT coalesce(sum(b.usd), 0) FROM budget_reservations b
                WHERE b.${column} = $1
                  AND NOT EXISTS (SELECT 1 FROM usage_records s
                                   WHERE s.owner_id = b.owner_id AND s.at >= b.created_at - interval '1 minute'
                                     AND ${SETTLES('s', 'b')}))::float8 AS reserved,
              coalesce((SELECT json_agg(u) FROM (${usage}) u), '[]'::json) AS usage`,
      params(holder.id, month),
    );
    const spentUsd = usageReport(rows[0].usage.map(usageByModelOf), price).costUsd;
    const reservedUsd = rows[0].reserved as number;
    return {
      limitUsd,
      spentUsd,
      reservedUsd,
      callUsd,
      month,
      ...(holder.kind === 'tenant' ? { tenant: holder.id } : {}),
      spent: spentUsd + reservedUsd + callUsd > limitUsd + EPSILON_USD,
    };
  }
}

/** Whose budget a check is of: one reader's, or a tenant's readers together. */
type BudgetHolder = { kind: 'reader' | 'tenant'; id: string };

/**
 * Per holder: the reservations' column naming it, its lines of the ledger (as its usage report
 * counts them: a reader's own GET /v1/usage, the tenant's report) and that query's parameters.
 */
const HOLDERS: Record<
  BudgetHolder['kind'],
  { column: string; usage: string; params: (id: string, month: { start: Date; end: Date }) => unknown[] }
> = {
  reader: { column: 'owner_id', usage: USAGE_BY_MODEL_SQL, params: (id, m) => [id, null, m.start, m.end] },
  tenant: { column: 'tenant', usage: usageSql(tenantLinesSql('model')), params: (id, m) => [id, m.start, m.end] },
};

const ADVISORY_LOCK_SQL = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`;

/** Prices are rounded to a millionth of a dollar; sums of them may drift by far less than this. */
const EPSILON_USD = 1e-9;

/**
 * Settles the reservations that ledger lines (`param`: a JSON array of UsageRow) account for: a
 * line of a turn at version v is the call planned on an earlier version (each turn makes its
 * calls one after the other, and the next is planned on the log holding this one's line), so it
 * takes the turn's reservations made before v; a line never stored (version null: a conversation
 * erased meanwhile) takes all of the turn's. A cancel's line takes none: the call it stopped is
 * recorded (ModelCallStopped) just after it, and settles then. `guard`: an SQL condition all must meet.
 */
export const SETTLE_RESERVATIONS_SQL = (param: string, guard = 'true'): string => `
  DELETE FROM budget_reservations b
   USING jsonb_to_recordset(${param}::jsonb) AS s(turn_id uuid, version integer, kind text)
   WHERE ${guard} AND ${SETTLES('s', 'b')}`;

/** Whether ledger line `line` settles reservation `r` (the rule above, as SQL over their aliases). */
const SETTLES = (line: string, r: string): string =>
  `${line}.kind <> 'cancel' AND ${r}.turn_id = ${line}.turn_id AND (${line}.version IS NULL OR ${r}.at_version < ${line}.version)`;
