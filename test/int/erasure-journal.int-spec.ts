import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client, Pool } from 'pg';
import { BooksRepository } from '@parley/books';
import { ErasureJournal, Erasures, journalDatabaseName, openErasureJournal } from '@parley/erasure';
import { EventStore } from '@parley/event-store';
import { conversationStarted, givenConversation, userMessagePosted } from '../support/factories/events';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const run = promisify(execFile);

/** A word no other test writes, to look for in a dump. */
const canary = (what: string) => `${what}${randomUUID().slice(0, 8)}`;

/** Whether a plain-SQL dump of the database holds the word, as text or as bytes (an upload is bytea, dumped in hex). */
async function inDump(url: string, word: string): Promise<boolean> {
  const { stdout } = await run('pg_dump', ['--no-owner', url], { maxBuffer: 512 * 1024 * 1024 });
  return stdout.includes(word) || stdout.includes(Buffer.from(word).toString('hex'));
}

/**
 * The erasure journal (docs/erasure.md, "Backups and restores"): a backup taken before an erasure,
 * restored into a fresh database, has the erased words back until the journal's replay erases
 * them again through the same paths.
 */
describe(ErasureJournal.name, () => {
  let db: TestDatabase;
  let journalDb: TestDatabase;
  let journal: ErasureJournal;
  let dir: string;
  const cleanup: Array<() => Promise<unknown>> = [];

  const erasuresOn = (pool: Pool, j: ErasureJournal | null = journal) => Erasures.on(pool, { journal: j });

  beforeAll(async () => {
    db = await createTestDatabase();
    // the journal's own database, blank as an operator creates it: the journal makes its table
    journalDb = await createTestDatabase({ empty: true });
    journal = new ErasureJournal(journalDb.pool);
    dir = await mkdtemp(join(tmpdir(), 'parley-backup-'));
  });
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    await db.drop();
    await journalDb.drop();
  });

  /** A conversation of the owner's whose question holds the word. */
  async function conversationWith(owner: string, word: string, bookId?: string): Promise<string> {
    const id = randomUUID();
    await givenConversation(new EventStore(db.pool), id, [
      conversationStarted({ ownerId: owner, ...(bookId ? { bookId, bookIds: [bookId] } : {}) }),
      userMessagePosted({ content: `Tell me about ${word}, please.` }),
    ]);
    return id;
  }
  /** A book of the owner's whose title and upload hold the word. */
  async function bookWith(owner: string, word: string): Promise<string> {
    const book = await new BooksRepository(db.pool).create(
      { ownerId: owner, title: `The ${word} Keeper`, author: null, format: 'markdown' },
      Buffer.from(`# One\n\nA tin of ${word} tea.\n`),
      null,
    );
    return book.id;
  }
  /** A custom-format pg_dump of the database, as a nightly backup. */
  async function backup(url: string): Promise<string> {
    const file = join(dir, `${randomUUID()}.dump`);
    await run('pg_dump', ['--format=custom', '--no-owner', `--file=${file}`, url]);
    return file;
  }
  /** The dump restored into a fresh database. */
  async function restore(file: string): Promise<TestDatabase> {
    const restored = await createTestDatabase({ empty: true });
    cleanup.push(() => restored.drop());
    await run('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${restored.url}`, file]);
    return restored;
  }

  it('erases again, after a restore, what was erased since the backup: a conversation, an account, a book', async () => {
    const [ann, bob, carol, dave] = ['ann', 'bob', 'carol', 'dave'].map((r) => `${r}-${randomUUID()}`);
    const words = {
      annChat: canary('annchat'),
      bobBook: canary('bobbook'),
      bobChat: canary('bobchat'),
      carolBook: canary('carolbook'),
      carolChat: canary('carolchat'),
    };
    const kept = canary('davechat');
    const annChat = await conversationWith(ann, words.annChat);
    const bobBook = await bookWith(bob, words.bobBook);
    await conversationWith(bob, words.bobChat, bobBook);
    const carolBook = await bookWith(carol, words.carolBook);
    await conversationWith(carol, words.carolChat, carolBook);
    await conversationWith(dave, kept);
    // last night's backup
    const dump = await backup(db.url);
    // this morning's erasures, and one of a conversation started after the backup
    const sut = erasuresOn(db.pool);
    await sut.conversation(ann, annChat);
    await sut.account(bob);
    await sut.book(carol, carolBook);
    const after = await conversationWith(ann, canary('annlater'));
    await sut.conversation(ann, after);
    for (const word of Object.values(words)) expect(await inDump(db.url, word)).toBe(false);
    const { rows: live } = await db.pool.query<{ id: string; subject: string; journaled: boolean }>(
      'SELECT id, subject, journaled_at IS NOT NULL AS journaled FROM erasures ORDER BY requested_at',
    );
    expect(live.map((r) => [r.subject, r.journaled])).toEqual([
      ['conversation', true],
      ['account', true],
      ['book', true],
      ['conversation', true],
    ]);
    // the journal holds ids only: none of the words
    expect(await inDump(journalDb.url, words.annChat)).toBe(false);
    const { rows: journaled } = await journalDb.pool.query(
      'SELECT id, subject, subject_id, requested_by FROM erasure_journal',
    );
    expect(journaled).toHaveLength(4);
    expect(journaled).toContainEqual({ id: live[1].id, subject: 'account', subject_id: bob, requested_by: bob });

    // the database is lost and last night's backup restored: every erased word is back
    const restored = await restore(dump);
    for (const word of Object.values(words)) expect(await inDump(restored.url, word)).toBe(true);

    // when the journal is replayed against it
    const replay = await erasuresOn(restored.pool).replayJournal();

    // then no erased word is left, another reader's words are, and each replay is audited under its erasure's id
    expect(replay.entries).toBe(4);
    expect(replay.replayed.map((r) => [r.entry.subject, r.conversations, r.books])).toEqual([
      ['conversation', 1, 0],
      ['account', 1, 1],
      ['book', 1, 1],
      ['conversation', 0, 0], // started after the backup: nothing of it to erase
    ]);
    for (const word of Object.values(words)) expect(await inDump(restored.url, word)).toBe(false);
    expect(await inDump(restored.url, kept)).toBe(true);
    const { rows: audit } = await restored.pool.query(
      `SELECT id, completed_at IS NOT NULL AS completed, replayed_at IS NOT NULL AS replayed
         FROM erasures ORDER BY requested_at`,
    );
    expect(audit).toEqual(live.map((r) => ({ id: r.id, completed: true, replayed: true })));
    // and a second replay finds nothing to do
    expect((await erasuresOn(restored.pool).replayJournal()).replayed).toEqual([]);
  });

  it('an erasure made while the journal is away is journaled by the next sweep', async () => {
    const away = ErasureJournal.connect('postgres://postgres@127.0.0.1:1/parley_erasures');
    cleanup.push(() => away.end());
    const reader = `erin-${randomUUID()}`;
    const id = await conversationWith(reader, canary('erinchat'));

    // the erasure is done and answers, though the journal cannot be written
    await erasuresOn(db.pool, away).conversation(reader, id);
    const { rows } = await db.pool.query<{ id: string; journaled_at: Date | null }>(
      'SELECT id, journaled_at FROM erasures WHERE subject_id = $1',
      [id],
    );
    expect(rows).toEqual([{ id: expect.any(String), journaled_at: null }]);

    // the sweep of a process that reaches the journal writes it there
    expect((await erasuresOn(db.pool).sweep()).journaled).toBeGreaterThanOrEqual(1);
    const { rows: entries } = await journalDb.pool.query(
      'SELECT subject, subject_id FROM erasure_journal WHERE id = $1',
      [rows[0].id],
    );
    expect(entries).toEqual([{ subject: 'conversation', subject_id: id }]);
    expect((await erasuresOn(db.pool).sweep()).journaled).toBe(0);
  });

  it('a replay without a journal is refused', async () => {
    await expect(erasuresOn(db.pool, null).replayJournal()).rejects.toThrow(
      'no erasure journal: set ERASURE_JOURNAL_URL',
    );
  });
});

/**
 * The journal without ERASURE_JOURNAL_URL: `<db>_erasure_journal` on DATABASE_URL's server, made
 * by the first process to start, so a deployment journals from its first erasure.
 */
describe(openErasureJournal.name, () => {
  let db: TestDatabase;
  const opened: ErasureJournal[] = [];
  const onServer = async (sql: string, params: unknown[] = []) => {
    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      return (await c.query(sql, params)).rows;
    } finally {
      await c.end();
    }
  };
  const exists = async (name: string) =>
    (await onServer('SELECT 1 FROM pg_database WHERE datname = $1', [name])).length === 1;

  beforeEach(async () => {
    db = await createTestDatabase(); // its drop() drops the journal database beside it too
  });
  afterEach(async () => {
    for (const j of opened.splice(0)) await j.end();
    await db.drop();
    expect(await existsAnywhere(journalDatabaseName(db.url))).toBe(false);
  });

  it('creates <db>_erasure_journal beside DATABASE_URL, once, though processes start together', async () => {
    const warnings: string[] = [];
    const name = journalDatabaseName(db.url);
    expect(name).toBe(`${new URL(db.url).pathname.slice(1)}_erasure_journal`);
    expect(await exists(name)).toBe(false);
    const journals = await Promise.all(
      Array.from({ length: 6 }, () =>
        openErasureJournal({ databaseUrl: db.url, journalUrl: null }, (m) => warnings.push(m)),
      ),
    );
    opened.push(...journals.filter((j): j is ErasureJournal => j !== null));
    expect(opened).toHaveLength(6);
    expect(warnings).toEqual([]);
    expect(await exists(name)).toBe(true);
    // every one of them writes to it, and reads what the others wrote
    await Promise.all(
      opened.map((j, i) =>
        j.append([{ id: randomUUID(), subject: 'conversation', subjectId: `c${i}`, requestedBy: 'r', at: new Date() }]),
      ),
    );
    let read = 0;
    for await (const page of opened[0].entries()) read += page.length;
    expect(read).toBe(6);
  });

  it('ERASURE_JOURNAL_URL overrides it: nothing is created beside DATABASE_URL', async () => {
    const elsewhere = await createTestDatabase({ empty: true });
    try {
      const j = await openErasureJournal({ databaseUrl: db.url, journalUrl: elsewhere.url }, () => undefined);
      opened.push(j!);
      await j!.append([{ id: randomUUID(), subject: 'book', subjectId: 'b', requestedBy: 'r', at: new Date() }]);
      expect((await elsewhere.pool.query('SELECT count(*)::int AS n FROM erasure_journal')).rows[0].n).toBe(1);
      expect(await exists(journalDatabaseName(db.url))).toBe(false);
    } finally {
      for (const j of opened.splice(0)) await j.end();
      await elsewhere.drop();
    }
  });

  it('says once what to set when its user may not create databases, and goes on unjournaled', async () => {
    const role = `parley_nocreatedb_${randomUUID().slice(0, 8)}`;
    await onServer(`CREATE ROLE "${role}" LOGIN NOCREATEDB`);
    try {
      const url = new URL(db.url);
      url.username = role;
      const warnings: string[] = [];
      const journal = await openErasureJournal({ databaseUrl: url.toString(), journalUrl: null }, (m) =>
        warnings.push(m),
      );
      expect(journal).toBeNull();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`"${journalDatabaseName(db.url)}" cannot be created`);
      expect(warnings[0]).toContain('permission denied');
      expect(warnings[0]).toContain('set ERASURE_JOURNAL_URL');
      expect(await exists(journalDatabaseName(db.url))).toBe(false);
    } finally {
      await onServer(`DROP ROLE IF EXISTS "${role}"`);
    }
  });

  /** Whether any database of the server has that name (after db is dropped: asked through the template's server). */
  async function existsAnywhere(name: string): Promise<boolean> {
    const admin = new URL(process.env.PARLEY_TEST_TEMPLATE_URL!);
    admin.pathname = '/postgres';
    const c = new Client({ connectionString: admin.toString() });
    await c.connect();
    try {
      return (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    } finally {
      await c.end();
    }
  }
});
