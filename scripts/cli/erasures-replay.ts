/**
 * `erasures replay`: an admin tool on the database of DATABASE_URL and the erasure journal of
 * ERASURE_JOURNAL_URL (docs/operations.md, "Backups and restores"): after a restore, erases again
 * every erasure the journal holds that the database does not show completed, and prints each.
 * The Redis jobs of what it erases are left listed for a worker's erasure sweep.
 */
import { Pool } from 'pg';
import { loadErasureJournalTarget } from '@parley/config';
import { BooksRepository } from '@parley/books';
import { ErasureJournal, Erasures, ReplayedErasure } from '@parley/erasure';
import { EventStore } from '@parley/event-store';
import { EXIT } from './errors';

export async function replayErasures(json: boolean): Promise<number> {
  const { databaseUrl, journalUrl } = loadErasureJournalTarget();
  if (!journalUrl) {
    console.error('ERASURE_JOURNAL_URL is unset: there is no erasure journal to replay');
    return EXIT.usage;
  }
  const pool = new Pool({ connectionString: databaseUrl });
  const journal = ErasureJournal.connect(journalUrl);
  try {
    const erasures = new Erasures(new EventStore(pool), pool, new BooksRepository(pool), undefined, undefined, journal);
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
