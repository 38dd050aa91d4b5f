import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expectOk } from '../support/api';
import { conversationHelpers } from '../support/conversation-helpers';
import { tinyBookMarkdown, waitForBook } from '../support/factories/books';
import { Client, clientFor, startStack, Stack } from '../support/stack';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

const run = promisify(execFile);
const canary = (what: string) => `${what}${randomUUID().replace(/-/g, '').slice(0, 12)}`;

/** Whether a plain-SQL dump of the database holds the word. */
async function inDatabase(url: string, word: string): Promise<boolean> {
  const { stdout } = await run('pg_dump', ['--no-owner', url], { maxBuffer: 512 * 1024 * 1024 });
  return stdout.includes(word);
}

/**
 * Backups and restores (docs/operations.md): a backup taken before a reader's erasure, restored,
 * brings the reader's words back; the erasure journal, in a database the restore does not touch,
 * erases them again, with `npm run cli -- erasures replay` or when a worker starts on it.
 */
describe('backups and restores: the erasure journal (e2e, built processes)', () => {
  let journal: TestDatabase;
  let dir: string;
  const restored: TestDatabase[] = [];
  const workers: Stack[] = [];
  beforeAll(async () => {
    journal = await createTestDatabase({ empty: true });
    dir = await mkdtemp(join(tmpdir(), 'parley-backup-'));
  });
  const s = useReaderStack({
    env: () => ({ LLM_MODEL: 'claude-sonnet-5-5', ERASURE_JOURNAL_URL: journal.url }),
  });
  afterAll(async () => {
    for (const w of workers) await w.stop(); // (drops its restored database)
    for (const db of restored) await db.drop();
    await journal?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const helpers = (c: Client, book?: () => string) => conversationHelpers(() => c, book);
  const bookWith = async (c: Client, word: string): Promise<string> => {
    const content = tinyBookMarkdown().replace('a tin of peppermint tea', `a tin of ${word} tea`);
    const book = expectOk(
      await c.api.POST('/v1/books', { body: { title: `The ${word} Keeper`, format: 'markdown', content } }),
      202,
    );
    return (await waitForBook(c, book.id)).id;
  };
  /** The dump restored into a fresh, empty database. */
  const restore = async (file: string, keep = true): Promise<TestDatabase> => {
    const db = await createTestDatabase({ empty: true });
    if (keep) restored.push(db);
    await run('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${db.url}`, file]);
    return db;
  };
  const replayCli = (databaseUrl: string) =>
    run(process.execPath, ['dist/scripts/cli.js', 'erasures', 'replay'], {
      env: { ...process.env, DATABASE_URL: databaseUrl, ERASURE_JOURNAL_URL: journal.url, LOG_LEVEL: 'warn' },
    });

  it("restoring last night's backup does not bring back this morning's erasures", async () => {
    // given alice's question and bob's book and question, each holding a canary word
    const aliceWord = canary('tarts');
    const aliceChat = await s.conversation();
    expect((await s.ask(aliceChat, `Who stole the ${aliceWord} from the lighthouse?`)).ending.type).toBe(
      'AssistantReplied',
    );
    const bob = clientFor(s.stack.base, `reader-${randomUUID()}`);
    const bobWord = canary('keeper');
    const bobBook = await bookWith(bob, bobWord);
    const bobChat = await helpers(bob, () => bobBook).conversation();
    const bobQuestion = canary('lamp');
    await helpers(bob).ask(bobChat, `Where is the ${bobQuestion}?`);
    for (const word of [aliceWord, bobWord, bobQuestion])
      await waitFor(`${word} in the database`, () => inDatabase(s.stack.db.url, word), 30_000, 500);
    // and last night's backup
    const dump = join(dir, 'nightly.dump');
    await run('pg_dump', ['--format=custom', '--no-owner', `--file=${dump}`, s.stack.db.url]);

    // when alice deletes her conversation and bob his account this morning
    expect((await s.alice.req('DELETE', `/v1/conversations/${aliceChat}`)).status).toBe(204);
    expect((await bob.req('DELETE', '/v1/me')).status).toBe(204);
    for (const word of [aliceWord, bobWord, bobQuestion])
      await waitFor(`${word} gone`, async () => !(await inDatabase(s.stack.db.url, word)), 30_000, 500);

    // and the database is lost and last night's backup restored: their words are back
    const byCli = await restore(dump);
    for (const word of [aliceWord, bobWord, bobQuestion]) expect(await inDatabase(byCli.url, word)).toBe(true);

    // then the one command erases them again, saying what it did, and a second run has nothing to do
    const first = await replayCli(byCli.url);
    expect(first.stdout).toContain(`conversation ${aliceChat}`);
    expect(first.stdout).toContain(`account ${bob.userId}`);
    expect(first.stdout).toContain('1 conversation(s), 1 book(s) erased again');
    expect(first.stdout).toContain('2 erasure(s) in the journal, 2 erased again in this database');
    for (const word of [aliceWord, bobWord, bobQuestion]) expect(await inDatabase(byCli.url, word)).toBe(false);
    expect((await replayCli(byCli.url)).stdout).toContain('2 erasure(s) in the journal, 0 erased again');

    // and so does a worker started on another restore of it, before it dispatches anything
    const byWorker = await restore(dump, false);
    const { DATABASE_URL: _, QUEUE_PREFIX: __, ...env } = s.stack.env;
    const worker = await startStack({ apis: 0, workers: 1, database: byWorker, env });
    workers.push(worker);
    await waitFor(
      'the worker to replay the journal',
      async () => {
        const { rows } = await byWorker.pool.query(
          'SELECT count(*)::int AS n FROM erasures WHERE replayed_at IS NOT NULL AND completed_at IS NOT NULL',
        );
        return rows[0].n === 2;
      },
      30_000,
      250,
    );
    for (const word of [aliceWord, bobWord, bobQuestion]) expect(await inDatabase(byWorker.url, word)).toBe(false);
    // (alice's own book, never erased, is still there)
    expect((await byWorker.pool.query('SELECT 1 FROM books WHERE id = $1', [s.bookId])).rowCount).toBe(1);
  });
});
