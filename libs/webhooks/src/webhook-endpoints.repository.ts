import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { inTransaction } from '@parley/event-store';
import { WebhookKind } from './webhook-messages';

/** The first key of the advisory lock a reader's registrations take turns under (the second is the owner hashed). */
const REGISTRATION_LOCK = 0x77686b65; // 'whke'

/** A reader's endpoint as listed (never with its secret, which only its creation shows). */
export interface WebhookEndpoint {
  id: string;
  url: string;
  events: WebhookKind[];
  createdAt: string;
  /** set once it kept failing: nothing more is sent to it */
  disabledAt: string | null;
  disabledReason: string | null;
  /** deliveries waiting to be sent (or retried) */
  pendingDeliveries: number;
}

interface EndpointRow {
  id: string;
  url: string;
  events: WebhookKind[];
  created_at: Date;
  disabled_at: Date | null;
  disabled_reason: string | null;
  pending: number;
}

const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  url: r.url,
  events: r.events,
  createdAt: r.created_at.toISOString(),
  disabledAt: r.disabled_at?.toISOString() ?? null,
  disabledReason: r.disabled_reason,
  pendingDeliveries: r.pending,
});

const COLUMNS = `e.id, e.url, e.events, e.created_at, e.disabled_at, e.disabled_reason,
  (SELECT count(*)::int FROM webhook_deliveries d WHERE d.endpoint_id = e.id) AS pending`;

/** Readers' webhook endpoints (docs/webhooks.md). */
@Injectable()
export class WebhookEndpoints {
  constructor(@Inject(Pool) private readonly db: Pool) {}

  /**
   * Registers an endpoint unless the owner has `max` already; null when they have. The owner's
   * registrations take turns under a transaction-level advisory lock, and each counts after taking
   * it (a statement's own snapshot would not see the row another one just committed).
   */
  async create(
    ownerId: string,
    endpoint: { url: string; events: WebhookKind[]; secret: string },
    max: number,
  ): Promise<WebhookEndpoint | null> {
    const rows = await inTransaction(this.db, async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [REGISTRATION_LOCK, ownerId]);
      const inserted = await tx.query<EndpointRow>(
        `INSERT INTO webhook_endpoints (owner_id, url, events, secret)
         SELECT $1, $2, $3::text[], $4 WHERE (SELECT count(*) FROM webhook_endpoints WHERE owner_id = $1) < $5
         RETURNING id, url, events, created_at, disabled_at, disabled_reason, 0 AS pending`,
        [ownerId, endpoint.url, endpoint.events, endpoint.secret, max],
      );
      return inserted.rows;
    });
    return rows.length ? toEndpoint(rows[0]) : null;
  }

  async list(ownerId: string): Promise<WebhookEndpoint[]> {
    const { rows } = await this.db.query<EndpointRow>(
      `SELECT ${COLUMNS} FROM webhook_endpoints e WHERE e.owner_id = $1 ORDER BY e.created_at, e.id`,
      [ownerId],
    );
    return rows.map(toEndpoint);
  }

  /** Deletes the owner's endpoint and its pending deliveries; false when there is none. */
  async delete(ownerId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.db.query('DELETE FROM webhook_endpoints WHERE id = $1 AND owner_id = $2', [
      id,
      ownerId,
    ]);
    return (rowCount ?? 0) > 0;
  }

  /** An account's erasure: every endpoint of the reader, with their pending deliveries. */
  async deleteOwnedBy(ownerId: string): Promise<number> {
    const { rowCount } = await this.db.query('DELETE FROM webhook_endpoints WHERE owner_id = $1', [ownerId]);
    return rowCount ?? 0;
  }
}
