import { Pool } from 'pg';
import { WebhookKind } from './webhook-messages';

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
export class WebhookEndpoints {
  constructor(private readonly db: Pick<Pool, 'query'>) {}

  /** Registers an endpoint unless the owner has `max` already; null when they have. */
  async create(
    ownerId: string,
    endpoint: { url: string; events: WebhookKind[]; secret: string },
    max: number,
  ): Promise<WebhookEndpoint | null> {
    // one statement, the owner's rows locked: registrations at once wait for each other's count
    // (a reader's very first two race unlocked, which a limit of 20 can bear)
    const { rows } = await this.db.query<EndpointRow>(
      `WITH mine AS (SELECT id FROM webhook_endpoints WHERE owner_id = $1 FOR UPDATE),
            e AS (
              INSERT INTO webhook_endpoints (owner_id, url, events, secret)
              SELECT $1, $2, $3::text[], $4 WHERE (SELECT count(*) FROM mine) < $5
              RETURNING *)
       SELECT e.id, e.url, e.events, e.created_at, e.disabled_at, e.disabled_reason, 0 AS pending FROM e`,
      [ownerId, endpoint.url, endpoint.events, endpoint.secret, max],
    );
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
