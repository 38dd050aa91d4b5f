import { Pool } from 'pg';
import { ErasureSubject } from '@parley/conversation';

/** One completed erasure as the journal keeps it: ids and a time, never content. */
export interface JournalEntry {
  /** the erasure's id in `erasures` (and in its tombstones) */
  id: string;
  subject: ErasureSubject;
  subjectId: string;
  /** the reader who asked (null: the system, for a conversation deleted before erasure existed) */
  requestedBy: string | null;
  /** when it was requested */
  at: Date;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS erasure_journal (
    id           uuid        PRIMARY KEY,
    subject      text        NOT NULL CHECK (subject IN ('conversation', 'book', 'account')),
    subject_id   text        NOT NULL,
    requested_by text,
    at           timestamptz NOT NULL,
    journaled_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX IF NOT EXISTS erasure_journal_at ON erasure_journal (at, id);`;

/**
 * The erasure journal (docs/erasure.md, "Backups and restores"): every completed erasure, by id,
 * in a Postgres database of its own (ERASURE_JOURNAL_URL, else `<db>_erasure_journal` beside
 * DATABASE_URL) that backups of the main database do not hold, so that restoring one of them does
 * not roll it back; the worker and `erasures replay`
 * erase again what the restored database does not show erased. Every API and worker process
 * appends to it; an entry is written once (its id), so appending twice is harmless.
 */
export class ErasureJournal {
  private ready?: Promise<void>;

  /** `prepare`: what must be done before the journal's database is first used (create it, when it is ours to make). */
  constructor(
    private readonly pool: Pool,
    private readonly prepare: () => Promise<unknown> = async () => undefined,
  ) {}

  /** A journal on its own pool; end() closes it. */
  static connect(url: string, prepare?: () => Promise<unknown>): ErasureJournal {
    const pool = new Pool({ connectionString: url, max: 4, application_name: 'parley-erasure-journal' });
    pool.on('error', () => undefined); // an idle client's connection dropped: the pool replaces it
    return new ErasureJournal(pool, prepare);
  }

  async append(entries: JournalEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.schema();
    await this.pool.query(
      `INSERT INTO erasure_journal (id, subject, subject_id, requested_by, at)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])
       ON CONFLICT (id) DO NOTHING`,
      [
        entries.map((e) => e.id),
        entries.map((e) => e.subject),
        entries.map((e) => e.subjectId),
        entries.map((e) => e.requestedBy),
        entries.map((e) => e.at.toISOString()),
      ],
    );
  }

  /** Every entry, oldest request first, a page at a time. */
  async *entries(pageSize = 1_000): AsyncGenerator<JournalEntry[]> {
    await this.schema();
    let after: { at: Date; id: string } | undefined;
    for (;;) {
      const { rows } = await this.pool.query<{
        id: string;
        subject: ErasureSubject;
        subject_id: string;
        requested_by: string | null;
        at: Date;
      }>(
        `SELECT id, subject, subject_id, requested_by, at FROM erasure_journal
          WHERE $1::timestamptz IS NULL OR (at, id) > ($1::timestamptz, $2::uuid)
          ORDER BY at, id LIMIT $3`,
        [after?.at.toISOString() ?? null, after?.id ?? null, pageSize],
      );
      if (rows.length === 0) return;
      yield rows.map((r) => ({
        id: r.id,
        subject: r.subject,
        subjectId: r.subject_id,
        requestedBy: r.requested_by,
        at: r.at,
      }));
      const last = rows[rows.length - 1];
      after = { at: last.at, id: last.id };
    }
  }

  async end(): Promise<void> {
    await this.pool.end();
  }

  /** Creates the table on first use (the journal's database is not migrated with the main one). */
  private schema(): Promise<void> {
    this.ready ??= this.createSchema().catch((e: unknown) => {
      this.ready = undefined;
      throw e;
    });
    return this.ready;
  }

  private async createSchema(): Promise<void> {
    await this.prepare();
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      // processes starting together: one creates, the others wait and find it there
      await c.query(`SELECT pg_advisory_xact_lock(hashtext('parley.erasure_journal'))`);
      await c.query(SCHEMA);
      await c.query('COMMIT');
    } catch (e) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      c.release();
    }
  }
}
