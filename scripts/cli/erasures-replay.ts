/**
 * `erasures replay`: an admin tool on the database of DATABASE_URL and the erasure journal of
 * ERASURE_JOURNAL_URL, else `<db>_erasure_journal` beside it (docs/operations.md, "Backups and restores"): after a restore, erases again
 * every erasure the journal holds that the database does not show completed, and prints each.
 * The Redis jobs of what it erases are left listed for a worker's erasure sweep.
 */
import { Pool } from 'pg';
import { loadErasureJournalTarget } from '@parley/config';
import { Erasures, openErasureJournal, ReplayedErasure } from '@parley/erasure';
import { EXIT } from './errors';

export async function replayErasures(json: boolean): Promise<number> {
  const target = loadErasureJournalTarget();
  const journal = await openErasureJournal(target, (message) => console.error(message));
  if (!journal) return EXIT.usage;
  const pool = new Pool({ connectionString: target.databaseUrl });
  try {
    const erasures = Erasures.on(pool, { journal });
    const line = (r: ReplayedErasure) =>
      json
        ? JSON.stringify({
            erasureId: r.entry.id,
            subject: r.entry.subject,
            subjectId: r.entry.subjectId,
            requestedAt: r.entry.at.toISOString(),
            conversations: r.conversations,
            books: r.books,
            ...(r.skipped ? { skipped: r.skipped } : {}),
          })
        : `${r.entry.at.toISOString()}  ${r.entry.subject} ${r.entry.subjectId}  (erasure ${r.entry.id})  ` +
          (r.skipped
            ? `not replayed: ${r.skipped}`
            : `${r.conversations} conversation(s), ${r.books} book(s) erased again`);
    const { entries, replayed } = await erasures.replayJournal((r) => console.log(line(r)));
    const summary = `${entries} erasure(s) in the journal, ${replayed.length} erased again in this database`;
    if (json) console.error(summary);
    else console.log(summary);
    return replayed.some((r) => r.skipped) ? EXIT.server : EXIT.ok;
  } finally {
    await journal.end();
    await pool.end();
  }
}
