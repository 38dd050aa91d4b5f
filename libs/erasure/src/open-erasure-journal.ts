import { ErasureJournal } from './erasure-journal';
import {
  ensureJournalDatabase,
  journalDatabaseName,
  JournalDatabaseRefused,
  journalUrlBeside,
} from './journal-database';

/** Where the journal is: ERASURE_JOURNAL_URL when set (journalUrl), else beside DATABASE_URL. */
export interface JournalTarget {
  databaseUrl: string;
  journalUrl: string | null;
}

/**
 * The erasure journal of this deployment: ERASURE_JOURNAL_URL's database when it is set, else
 * `<db>_erasure_journal` on DATABASE_URL's server, created here when missing. Null (after one
 * warning that says what to do) when that database cannot be created: erasures go on unjournaled.
 */
export async function openErasureJournal(
  target: JournalTarget,
  warn: (message: string) => void,
): Promise<ErasureJournal | null> {
  if (target.journalUrl) return ErasureJournal.connect(target.journalUrl);
  const name = journalDatabaseName(target.databaseUrl);
  const ensure = () => ensureJournalDatabase(target.databaseUrl);
  try {
    await ensure();
  } catch (e) {
    if (e instanceof JournalDatabaseRefused) {
      warn(
        `the erasure journal database "${name}" cannot be created beside DATABASE_URL (${e.message}): erasures ` +
          'are not journaled, so restoring a backup brings back what was erased after it was taken. Create that ' +
          'database, or set ERASURE_JOURNAL_URL to a database of its own (docs/operations.md, "Backups and restores")',
      );
      return null;
    }
    // the server cannot be reached now: the journal makes its database on first use
    warn(`the erasure journal database "${name}" cannot be checked yet: ${(e as Error).message}`);
  }
  return ErasureJournal.connect(journalUrlBeside(target.databaseUrl), ensure);
}
