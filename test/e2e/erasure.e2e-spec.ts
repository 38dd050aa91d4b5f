import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { Client as PgClient } from 'pg';
import { EventStore } from '@parley/event-store';
import { rebuildReadModels } from '@parley/read-models';
import { expectOk } from '../support/api';
import { conversationHelpers } from '../support/conversation-helpers';
import { newBook, tinyBookMarkdown, waitForBook } from '../support/factories/books';
import { clientFor, Client } from '../support/stack';
import { redisUrl } from '../support/test-database';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

const run = promisify(execFile);

/**
 * Erasure as a reader and a privacy check see it (docs/erasure.md): after a delete, no word of the
 * reader's message, of the model's answer or of a deleted book is left in a dump of the database
 * or in any Redis key of the deployment, while the money spent stays in the usage ledger.
 */
describe('erasure (e2e, real SDK against the fake Messages API)', () => {
  const s = useReaderStack({ env: { LLM_MODEL: 'claude-sonnet-5-5', ERASURE_SWEEP_MS: '500' } });
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(redisUrl());
  });
  afterAll(() => redis?.disconnect());

  const helpers = (c: Client, book?: () => string) => conversationHelpers(() => c, book);
  const { conversation, ask } = s;
  const canary = (what: string) => `${what}${randomUUID().replace(/-/g, '').slice(0, 12)}`;

  /** Whether a plain-SQL dump of the database (data and schema, as pg_dump writes it) holds the word. */
  const inDatabase = async (word: string): Promise<boolean> => {
    const { stdout } = await run('pg_dump', ['--no-owner', s.stack.db.url], { maxBuffer: 512 * 1024 * 1024 });
    return stdout.includes(word);
  };
  /** Whether any Redis key of this deployment (its BullMQ prefix), of any type, holds the word. */
  const inRedis = async (word: string): Promise<boolean> => {
    for (const key of await redis.keys(`${s.stack.env.QUEUE_PREFIX}:*`)) {
      const type = await redis.type(key);
      const value =
        type === 'string'
          ? await redis.get(key)
          : type === 'hash'
            ? await redis.hgetall(key)
            : type === 'list'
              ? await redis.lrange(key, 0, -1)
              : type === 'set'
                ? await redis.smembers(key)
                : type === 'zset'
                  ? await redis.zrange(key, 0, -1)
                  : type === 'stream'
                    ? await redis.xrange(key, '-', '+')
                    : null;
      if (JSON.stringify(value).includes(word)) return true;
    }
    return false;
  };
  const gone = (word: string) =>
    waitFor(
      `"${word}" to be gone from Postgres and Redis`,
      async () => !(await inDatabase(word)) && !(await inRedis(word)),
      60_000,
      500,
    );

  const usage = async (c: Client) => (await c.req('GET', '/v1/usage')).body;
  const show = (c: Client, id: string) => c.req('GET', `/v1/conversations/${id}`);

  /** A book whose text holds the word, ready to be searched. */
  const bookWith = async (c: Client, word: string): Promise<string> => {
    const content = tinyBookMarkdown().replace('a tin of peppermint tea', `a tin of ${word} tea`);
    const book = expectOk(
      await c.api.POST('/v1/books', { body: { title: 'The Keeper', format: 'markdown', content } }),
      202,
    );
    return (await waitForBook(c, book.id)).id;
  };

  it('erases a deleted conversation from the log, the read models and Redis; the money it spent stays', async () => {
    // given an answered question holding a canary word (the fake quotes the question and the passages)
    const word = canary('tarts');
    const id = await conversation();
    const { ending } = await ask(id, `Who stole the ${word} from the lighthouse?`);
    expect(ending.type).toBe('AssistantReplied');
    expect(await inDatabase(word)).toBe(true);
    expect(await inRedis(word)).toBe(true); // the turn's job keeps the paid-for answer until it is appended
    await waitFor('the answer in the ledger', async () => (await usage(s.alice)).turns === 1);
    const spent = await usage(s.alice);
    expect(spent.costUsd).toBeGreaterThan(0);
    // when the reader deletes it
    expect((await s.alice.req('DELETE', `/v1/conversations/${id}`)).status).toBe(204);
    // then it answers 404, no word of it is left anywhere, and the reader's spending did not go down
    expect((await show(s.alice, id)).status).toBe(404);
    expect((await s.alice.req('GET', `/v1/conversations/${id}/events`)).status).toBe(404);
    await gone(word);
    expect(await usage(s.alice)).toEqual(spent);
    // and a rebuild of the read models from the log brings nothing back, and keeps the ledger
    await rebuildReadModels(new EventStore(s.stack.db.pool));
    const { rows } = await s.stack.db.pool.query('SELECT 1 FROM conversations WHERE id = $1', [id]);
    expect(rows).toEqual([]);
    expect(await usage(s.alice)).toEqual(spent);
    // and the erasure is audited, content-free
    const audit = await s.stack.db.pool.query(
      `SELECT subject, requested_by, streams_erased, events_erased, completed_at FROM erasures WHERE subject_id = $1`,
      [id],
    );
    expect(audit.rows).toEqual([
      {
        subject: 'conversation',
        requested_by: s.alice.userId,
        streams_erased: 1,
        events_erased: expect.any(Number),
        completed_at: expect.any(Date),
      },
    ]);
    // and journaled, with no ERASURE_JOURNAL_URL set, in the database the stack made beside its own
    const journal = new URL(s.stack.db.url);
    journal.pathname = `${journal.pathname}_erasure_journal`;
    const j = new PgClient({ connectionString: journal.toString() });
    await j.connect();
    try {
      const { rows: entries } = await j.query(
        'SELECT subject, requested_by FROM erasure_journal WHERE subject_id = $1',
        [id],
      );
      expect(entries).toEqual([{ subject: 'conversation', requested_by: s.alice.userId }]);
    } finally {
      await j.end();
    }
    expect(s.stack.env.ERASURE_JOURNAL_URL).toBeUndefined();
    for (const proc of [...s.stack.apis, ...s.stack.workers])
      expect(proc.output()).not.toMatch(/erasure journal|ERASURE_JOURNAL_URL/i);
  });

  it('erases a book with every conversation that ever had it: as a second book, added later, removed again, or in a fork', async () => {
    const bookWord = canary('heron');
    const doomed = await bookWith(s.alice, bookWord);
    const create = async (body: object) => expectOk(await s.alice.api.POST('/v1/conversations', { body }), 201).id;
    const patch = (id: string, bookIds: string[]) => s.alice.req('PATCH', `/v1/conversations/${id}`, { bookIds });
    // a conversation with it as its second book, whose answer quotes it
    const second = await create({ bookIds: [s.bookId, doomed] });
    const secondWord = canary('second');
    await helpers(s.alice).ask(second, `What tea did Marisol carry ${secondWord}?`);
    expect(await inDatabase(bookWord)).toBe(true);
    // one that had it added later and removed again
    const added = await create({ bookId: s.bookId });
    expect((await patch(added, [s.bookId, doomed])).status).toBe(200);
    const addedWord = canary('added');
    await helpers(s.alice).ask(added, `Tell me of ${addedWord}`);
    expect((await patch(added, [s.bookId])).status).toBe(200);
    // a fork of the first, and a conversation that never had it
    const fork = expectOk(
      await s.alice.api.POST('/v1/conversations/{id}/fork', { params: { path: { id: second } }, body: { version: 1 } }),
      201,
    ).id;
    const kept = await create({ bookId: s.bookId });
    // when the book is deleted
    expect((await s.alice.req('DELETE', `/v1/books/${doomed}`)).status).toBe(204);
    // then those conversations are gone, the other is kept, and no word of any of them is left
    for (const id of [second, added, fork]) expect((await show(s.alice, id)).status).toBe(404);
    expect((await show(s.alice, kept)).status).toBe(200);
    expect((await s.alice.req('GET', `/v1/books/${doomed}`)).status).toBe(404);
    for (const word of [bookWord, secondWord, addedWord]) await gone(word);
  });

  it("erases a whole account with DELETE /v1/me and leaves another reader's data", async () => {
    // given two readers, each with a book and an answered question
    const carol = clientFor(s.stack.base, `reader-${randomUUID()}`);
    const dave = clientFor(s.stack.base, `reader-${randomUUID()}`);
    const carolWord = canary('carol');
    const daveWord = canary('dave');
    const carolBook = await bookWith(carol, canary('carolbook'));
    const daveBook = (await newBook(dave)).id;
    const carolChat = await helpers(carol, () => carolBook).conversation();
    await helpers(carol).ask(carolChat, `Where is ${carolWord}?`);
    const daveChat = await helpers(dave, () => daveBook).conversation();
    await helpers(dave).ask(daveChat, `Where is ${daveWord}?`);
    // (both answers in the ledger, as the projection writes them a moment after the reply)
    for (const reader of [carol, dave])
      await waitFor('the answer in the ledger', async () => (await usage(reader)).turns === 1);
    const carolSpent = (await usage(carol)).costUsd;
    expect(carolSpent).toBeGreaterThan(0);
    const totalBefore = await ledgerTotal();
    // when carol erases her account
    expect((await carol.req('DELETE', '/v1/me')).status).toBe(204);
    // then her lists are empty and nothing of hers is left, dave is untouched, and the money stays on the books
    expect((await carol.req('GET', '/v1/conversations')).body.items).toEqual([]);
    expect((await carol.req('GET', '/v1/books')).body.items).toEqual([]);
    await gone(carolWord);
    expect(await inDatabase(daveWord)).toBe(true);
    expect((await show(dave, daveChat)).status).toBe(200);
    expect((await dave.req('GET', `/v1/books/${daveBook}`)).status).toBe(200);
    expect(await ledgerTotal()).toBeCloseTo(totalBefore, 9);
    const { rows } = await s.stack.db.pool.query('SELECT count(*)::int AS n FROM usage_records WHERE owner_id = $1', [
      carol.userId,
    ]);
    expect(rows[0].n).toBe(0);
    // and the same token goes on with an empty account, this month's spending still its own (by pseudonym)
    expect((await usage(carol)).costUsd).toBe(carolSpent);
  });

  it("keeps no erased reader's id on a call that was streaming while the account was erased, and counts its cost", async () => {
    const erin = clientFor(s.stack.base, `reader-${randomUUID()}`);
    const chat = expectOk(await erin.api.POST('/v1/conversations', { body: {} }), 201).id;
    s.fake.enqueue({ content: [{ type: 'text', text: 'and then '.repeat(300) }], delayMsPerChunk: 30 });
    const asked = s.fake.requests.length;
    expect((await erin.req('POST', `/v1/conversations/${chat}/messages`, { content: 'A long story?' })).status).toBe(
      202,
    );
    await waitFor('the model to stream the answer', async () => s.fake.requests.length > asked);
    // the fake sends message_start (what a stopped call is billed from) at once, then a chunk every
    // 30 ms for 9 s: half a second in, the call is surely billed and far from its end
    await new Promise((r) => setTimeout(r, 500));

    expect((await erin.req('DELETE', '/v1/me')).status).toBe(204);

    // the worker stops the call and records what it was billed, under the pseudonym only
    const line = await waitFor('the stopped call in the ledger', async () => {
      const { rows } = await s.stack.db.pool.query(
        `SELECT owner_id, owner_key, cost_usd FROM usage_records WHERE conversation_id = $1 AND kind = 'stopped_call'`,
        [chat],
      );
      return rows[0];
    });
    expect(line).toEqual({
      owner_id: null,
      owner_key: expect.stringMatching(/^[0-9a-f]{64}$/),
      cost_usd: expect.any(Number),
    });
    const named = await s.stack.db.pool.query('SELECT count(*)::int AS n FROM usage_records WHERE owner_id = $1', [
      erin.userId,
    ]);
    expect(named.rows[0].n).toBe(0);
    expect((await usage(erin)).costUsd).toBeGreaterThan(0);
  });

  async function ledgerTotal(): Promise<number> {
    const { rows } = await s.stack.db.pool.query('SELECT coalesce(sum(cost_usd), 0)::float8 AS usd FROM usage_records');
    return rows[0].usd;
  }
});
