import type { Pool } from 'pg';
import type { AppendNotifier } from '@parley/event-store';
import type { AdminLimits } from './tenant-budgets';

/** Where the triggers of migration 036 announce a change: `reader:<user id>` or `tenant:<tenant>`. */
export const ADMIN_LIMITS_CHANNEL = 'parley_admin_limits';

/** Migration 036's triggers: without them (a database not migrated yet) no change is announced. */
const ANNOUNCING_TRIGGERS = [
  'tenant_readers_announced',
  'tenant_readers_moved',
  'tenant_budgets_announced',
  'reader_budgets_announced',
];

/** Readers whose limits one process keeps at most (the oldest kept goes first). */
const KEPT_MAX = 50_000;

/**
 * The limits tenant admins set over each reader, as this process last read them: a post's door
 * check and every model call's reservation would otherwise read them each time, though they change
 * only when an admin (or a reader's move to another tenant) changes them. A change is forgotten
 * here when the triggers announce it, and at once when this process made it; nothing is kept
 * while the announcements cannot be heard, and everything is forgotten when they can again. A
 * read under way when a change is heard is not kept (the generation moved), so what is kept was
 * read after the last change heard. On a database whose triggers are missing (not migrated yet),
 * nothing is kept.
 */
export class AdminLimitsCache {
  private readonly kept = new Map<string, AdminLimits>();
  private generation = 0;
  private triggersFound?: Promise<boolean>;

  constructor(
    private readonly notifier: AppendNotifier,
    private readonly db: Pick<Pool, 'query'>,
  ) {
    notifier.on('notification', this.heard);
    notifier.on('reconnected', this.forgetAll);
    void notifier.listenAlso(ADMIN_LIMITS_CHANNEL);
  }

  async limitsOf(userId: string, read: () => Promise<AdminLimits>): Promise<AdminLimits> {
    const trusted = this.notifier.hears(ADMIN_LIMITS_CHANNEL) && (await this.changesAnnounced());
    const kept = trusted ? this.kept.get(userId) : undefined;
    if (kept) return kept;
    const generation = this.generation;
    const limits = await read();
    if (trusted && generation === this.generation && this.notifier.hears(ADMIN_LIMITS_CHANNEL)) {
      this.kept.set(userId, limits);
      if (this.kept.size > KEPT_MAX) this.kept.delete(this.kept.keys().next().value!);
    }
    return limits;
  }

  /** Whether the database announces changes: asked once, and again after a failed look. */
  private changesAnnounced(): Promise<boolean> {
    this.triggersFound ??= this.db
      .query<{ found: number }>('SELECT count(*)::int AS found FROM pg_trigger WHERE tgname = ANY($1::text[])', [
        ANNOUNCING_TRIGGERS,
      ])
      .then(({ rows }) => rows[0].found === ANNOUNCING_TRIGGERS.length)
      .catch(() => {
        this.triggersFound = undefined;
        return false;
      });
    return this.triggersFound;
  }

  /** The reader's tenant or own budget changed. */
  forgetReader(userId: string): void {
    this.generation++;
    this.kept.delete(userId);
  }

  /** The tenant's cap changed: every reader kept in it. */
  forgetTenant(tenant: string): void {
    this.generation++;
    for (const [userId, limits] of this.kept) if (limits.tenant === tenant) this.kept.delete(userId);
  }

  readonly forgetAll = (): void => {
    this.generation++;
    this.kept.clear();
  };

  private readonly heard = (channel: string, payload: string): void => {
    if (channel !== ADMIN_LIMITS_CHANNEL) return;
    const colon = payload.indexOf(':');
    const [kind, id] = [payload.slice(0, colon), payload.slice(colon + 1)];
    if (kind === 'reader') this.forgetReader(id);
    else if (kind === 'tenant') this.forgetTenant(id);
    else this.forgetAll(); // from a later release: forget rather than guess
  };

  close(): void {
    this.notifier.off('notification', this.heard);
    this.notifier.off('reconnected', this.forgetAll);
  }
}
