import { Client } from 'pg';

/** The default journal database is named for the main one: `<db>_erasure_journal`. */
export const JOURNAL_DATABASE_SUFFIX = '_erasure_journal';

/** Postgres names are at most NAMEDATALEN - 1 bytes; a longer one would be cut, and not found again. */
const MAX_NAME_BYTES = 63;

/** The database DATABASE_URL names (none named: the user's own, as Postgres takes it). */
function databaseOf(url: URL): string {
  return decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username) || 'postgres';
}

/** `<db>_erasure_journal`, for the database of `databaseUrl`. */
export function journalDatabaseName(databaseUrl: string): string {
  return `${databaseOf(new URL(databaseUrl))}${JOURNAL_DATABASE_SUFFIX}`;
}

/** The journal database beside the main one: the same server, user and options. */
export function journalUrlBeside(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${encodeURIComponent(journalDatabaseName(databaseUrl))}`;
  return url.toString();
}

/** The journal database cannot be made beside the main one (no privilege, or its name is too long). */
export class JournalDatabaseRefused extends Error {}

/**
 * Creates the journal database beside the main one when it is missing, through DATABASE_URL's own
 * connection (its user may reach no other database). Processes starting together may race: the
 * one that loses finds the database made. Throws JournalDatabaseRefused when it cannot be made.
 */
export async function ensureJournalDatabase(databaseUrl: string): Promise<'found' | 'created'> {
  const name = journalDatabaseName(databaseUrl);
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
    throw new JournalDatabaseRefused(`its name "${name}" is longer than Postgres' ${MAX_NAME_BYTES} bytes`);
  }
  const c = new Client({ connectionString: databaseUrl, application_name: 'parley-erasure-journal' });
  c.on('error', () => undefined); // a dropped connection fails the query below instead
  await c.connect();
  try {
    const found = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return 'found';
    try {
      // template0: never connected to, so never "being accessed by other users"
      await c.query(`CREATE DATABASE "${name.replace(/"/g, '""')}" TEMPLATE template0`);
      return 'created';
    } catch (e) {
      const code = (e as { code?: string }).code;
      // another process created it first: the name is taken (42P04) or its catalogue row is (23505)
      if (code === '42P04' || code === '23505') return 'found';
      if (code === '42501') throw new JournalDatabaseRefused((e as Error).message);
      throw e;
    }
  } finally {
    await c.end().catch(() => undefined);
  }
}
