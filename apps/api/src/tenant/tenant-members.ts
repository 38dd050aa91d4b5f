import { Injectable, Logger } from '@nestjs/common';
import { TenantBudgets } from '@parley/read-models';
import { AuthUser } from '../auth/auth-user';

/** How long a reader's tenant, once written, is taken as known before it is written again. */
const NOTED_FOR_MS = 5 * 60_000;
const NOTED_MAX = 10_000;

/**
 * Notes which tenant each reader is in, as their token names it, on their authenticated requests
 * (the AuthGuard calls it): the log does not know a reader's tenant, their token does. A reader
 * whose token names none is taken out of any tenant. Written at most once per reader per few
 * minutes per process, unless their tenant changed.
 */
@Injectable()
export class TenantMembers {
  private readonly noted = new Map<string, { tenant: string | null; at: number }>();
  private readonly log = new Logger(TenantMembers.name);

  constructor(private readonly budgets: TenantBudgets) {}

  async note(user: AuthUser, now = Date.now()): Promise<void> {
    const tenant = user.tenant ?? null;
    const known = this.noted.get(user.id);
    if (known && known.tenant === tenant && now - known.at < NOTED_FOR_MS) return;
    try {
      if (tenant === null) await this.budgets.forgetReader(user.id);
      else await this.budgets.noteReader(user.id, tenant);
    } catch (e) {
      // the request goes on (it answers for itself if Postgres is away); the next one notes the reader
      this.log.warn(`could not note the tenant of reader ${user.id}: ${(e as Error).message}`);
      return;
    }
    this.noted.delete(user.id);
    this.noted.set(user.id, { tenant, at: now });
    // a Map keeps insertion order: the first key is the one noted longest ago
    if (this.noted.size > NOTED_MAX) this.noted.delete(this.noted.keys().next().value!);
  }
}
