import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { Envelope } from '../support/api';
import { conversationHelpers } from '../support/conversation-helpers';
import { RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { newBook, waitForBook } from '../support/factories/books';
import { Client, clientFor } from '../support/stack';
import { useFakeStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

const run = promisify(execFile);
const strip = (x: unknown) => JSON.stringify(x, (k, v) => (k === 'cache_control' ? undefined : v));

/** A word only chapter 3 holds: no reader below it ever has it quoted, so after a withdrawal no row may hold it. */
const CANARY = `Zephyrine${randomUUID().replace(/-/g, '').slice(0, 10)}`;

const catalogueBook = (): string =>
  [
    '# The Harbour Atlas',
    '',
    '## Chapter 1: The Chart',
    '',
    'Captain Odile unrolled a sea chart of the northern harbour, marked with the wreck of the Silver Gannet.',
    '',
    '## Chapter 2: The Tide',
    '',
    'At low tide the harbour master counted seven moorings and one drifting buoy painted orange.',
    '',
    '## Chapter 3: The Secret',
    '',
    `The chart's hidden legend named the cove ${CANARY}, where the Silver Gannet's bell still rings.`,
  ].join('\n');

/**
 * A publisher's catalogue: one book published under a tenant, read by every reader of that
 * tenant (listed, searched, talked about, sharing the prompt cache), hidden from everyone else,
 * changed only by its publishers, left alone by a reader's account erasure, paid for once by its
 * publisher, and withdrawn without taking the readers' conversations with it.
 */
describe('the catalogue (e2e, real SDK against the fake Messages API)', () => {
  // the tools loop unless a test's policy asks for the whole book (auto would read this small book whole)
  const s = useFakeStack({ env: { CONTEXTUAL_RETRIEVAL: 'true', LLM_RETRIEVAL_MODE: 'tools' } });
  const tenant = `acme-${randomUUID().slice(0, 8)}`;
  let publisher: Client;
  let reader: Client;
  let secondReader: Client;
  let otherTenant: Client;
  let noTenant: Client;
  let otherPublisher: Client;
  let bookId: string;
  let readerOwnBook: string;

  const as = (userId: string, claims: Record<string, unknown>) => clientFor(s.stack.base, userId, { claims });

  beforeAll(async () => {
    publisher = as(`publisher-${randomUUID()}`, { parley_tenant: tenant, parley_roles: ['publisher'] });
    reader = as(`reader-${randomUUID()}`, { parley_tenant: tenant });
    secondReader = as(`reader-${randomUUID()}`, { parley_tenant: tenant });
    otherTenant = as(`reader-${randomUUID()}`, { parley_tenant: `${tenant}-other` });
    noTenant = clientFor(s.stack.base, `reader-${randomUUID()}`);
    otherPublisher = as(`publisher-${randomUUID()}`, { parley_tenant: `${tenant}-other`, parley_roles: ['publisher'] });
    readerOwnBook = (await newBook(reader)).id;
  }, 60_000);

  const publish = (c: Client, visibility?: string) =>
    c.req('POST', '/v1/books', {
      title: 'The Harbour Atlas',
      author: 'A. Publisher',
      format: 'markdown',
      content: catalogueBook(),
      ...(visibility ? { visibility } : {}),
    });
  const listIds = async (c: Client, query = '') =>
    ((await c.req('GET', `/v1/books${query}`)).body.items as Array<{ id: string }>).map((b) => b.id);
  const sql = async <T>(text: string, params: unknown[] = []): Promise<T[]> =>
    (await s.stack.db.pool.query(text, params)).rows as T[];

  it("refuses a reader's publish with 403 forbidden and stores nothing", async () => {
    const before = await sql<{ n: number }>('SELECT count(*)::int AS n FROM books');
    const refused = await publish(reader, 'catalogue');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('forbidden');
    expect(await sql('SELECT count(*)::int AS n FROM books')).toEqual(before);
    expect((await publish(reader, 'shared')).status).toBe(400);
  });

  it('publishes a catalogue book once, ingested and paid for under the publisher', async () => {
    const accepted = await publish(publisher, 'catalogue');
    expect(accepted.status).toBe(202);
    expect(accepted.body.visibility).toBe('catalogue');
    bookId = accepted.body.id;
    const ready = await waitForBook(publisher, bookId, 60_000);
    expect(ready.visibility).toBe('catalogue');
    // contextual retrieval ran once, and its lines are the publisher's
    const lines = await sql<{ owner_id: string }>(
      `SELECT owner_id FROM usage_records WHERE book_id = $1 AND kind = 'contextualization'`,
      [bookId],
    );
    expect(lines.length).toBeGreaterThan(0);
    expect(new Set(lines.map((l) => l.owner_id))).toEqual(new Set([publisher.userId]));
    expect((await publisher.req('GET', '/v1/usage')).body.costUsd).toBeGreaterThan(0);
  });

  it("lists it to the tenant's readers beside their own books, filtered by ?visibility=, and shows and searches it", async () => {
    const mine = (await reader.req('GET', '/v1/books')).body.items as Array<{ id: string; visibility: string }>;
    expect(mine.map((b) => [b.id, b.visibility])).toEqual(
      expect.arrayContaining([
        [bookId, 'catalogue'],
        [readerOwnBook, 'private'],
      ]),
    );
    expect(await listIds(reader, '?visibility=catalogue')).toEqual([bookId]);
    expect(await listIds(reader, '?visibility=private')).toEqual([readerOwnBook]);
    expect((await reader.req('GET', '/v1/books?visibility=everything')).status).toBe(400);
    expect((await reader.req('GET', `/v1/books/${bookId}`)).body).toMatchObject({ id: bookId, status: 'ready' });
    const found = await reader.req('GET', `/v1/books/${bookId}/search?q=harbour+moorings`);
    expect(found.status).toBe(200);
    expect(found.body.items[0].text).toContain('seven moorings');
  });

  it('answers 404 on every route to a reader of another tenant and to a reader with no tenant', async () => {
    for (const outsider of [otherTenant, noTenant, otherPublisher]) {
      expect(await listIds(outsider)).not.toContain(bookId);
      const statuses = [
        (await outsider.req('GET', `/v1/books/${bookId}`)).status,
        (await outsider.req('GET', `/v1/books/${bookId}/search?q=harbour`)).status,
        (await outsider.req('GET', `/v1/books/${bookId}/events`)).status,
        (await outsider.req('PATCH', `/v1/books/${bookId}`, { title: 'Mine now' })).status,
        (await outsider.req('DELETE', `/v1/books/${bookId}`)).status,
        (await outsider.req('POST', '/v1/conversations', { bookId })).status,
        (await outsider.req('POST', '/v1/conversations', { bookIds: [bookId] })).status,
      ];
      expect({ user: outsider.userId, statuses }).toEqual({ user: outsider.userId, statuses: statuses.map(() => 404) });
    }
  });

  it('lets only a publisher of its tenant rename it: a reader gets 403 on PATCH and DELETE', async () => {
    const patch = await reader.req('PATCH', `/v1/books/${bookId}`, { title: 'Renamed by a reader' });
    expect(patch.status).toBe(403);
    expect(patch.body.code).toBe('forbidden');
    const del = await reader.req('DELETE', `/v1/books/${bookId}`);
    expect(del.status).toBe(403);
    expect(del.body.code).toBe('forbidden');
    const renamed = await publisher.req('PATCH', `/v1/books/${bookId}`, { title: 'The Harbour Atlas (2nd ed.)' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: bookId, title: 'The Harbour Atlas (2nd ed.)', visibility: 'catalogue' });
    // a reader renames their own book
    expect((await reader.req('PATCH', `/v1/books/${readerOwnBook}`, { title: 'Mine' })).body.title).toBe('Mine');
    expect((await reader.req('PATCH', `/v1/books/${readerOwnBook}`, { title: '' })).status).toBe(400);
  });

  let readerConversation: string;
  let readerTurnEvents: Envelope[];

  it("shares the prompt cache: a second reader's first call reads the prefix the first reader's wrote", async () => {
    const r1 = conversationHelpers(() => reader);
    const r2 = conversationHelpers(() => secondReader);
    // different reading positions and instructions: the book's part of the request is still the same
    readerConversation = (await reader.req('POST', '/v1/conversations', { bookId, readingPosition: 1 })).body.id;
    const second = await secondReader.req('POST', '/v1/conversations', { bookId, readingPosition: 2 });
    expect(second.status).toBe(201);
    await secondReader.req('PATCH', `/v1/conversations/${second.body.id}`, {
      policy: { instructions: 'Answer like a sailor.' },
    });
    const firstCall = (question: string) =>
      s.fake.requests.find((r: RecordedRequest) => JSON.stringify(r.body.messages).includes(question))!;

    const q1 = `Where is the wreck? ${randomUUID()}`;
    const a1 = await r1.ask(readerConversation, q1);
    expect(a1.ending.type).toBe('AssistantReplied');
    const q2 = `How many moorings? ${randomUUID()}`;
    const a2 = await r2.ask(second.body.id, q2);
    expect(a2.ending.type).toBe('AssistantReplied');
    readerTurnEvents = await r1.events(readerConversation);

    const [one, two] = [firstCall(q1), firstCall(q2)];
    // byte-identical up to the end of the book's part: tools, then the system prompt's shared block
    expect(strip(two.body.tools)).toBe(strip(one.body.tools));
    expect(JSON.stringify(two.body.system[0])).toBe(JSON.stringify(one.body.system[0]));
    expect(one.body.system[0].text).toContain('The Harbour Atlas');
    expect(one.body.system[1].text).toContain('chapter 1');
    expect(two.body.system[1].text).toContain('chapter 2');
    expect(two.body.system[1].text).toContain('Answer like a sailor.');
    // and the fake's prompt cache served it: the second reader's first call read it
    const shared = two.usage!.cache_read_input_tokens;
    expect(shared).toBeGreaterThan(0);
    expect(one.usage!.cache_read_input_tokens).toBe(0);
    expect(one.usage!.cache_creation_input_tokens).toBeGreaterThanOrEqual(shared);
  });

  it("bills readers' turns to the readers, and none of the catalogue book's ingestion", async () => {
    // the ledger is a projection of the log: the turns just answered reach it a moment later
    const readersLines = () =>
      sql<{ owner_id: string; kinds: string[] }>(
        `SELECT owner_id, array_agg(DISTINCT kind ORDER BY kind) AS kinds FROM usage_records
          WHERE owner_id = ANY($1) AND conversation_id IS NOT NULL GROUP BY owner_id`,
        [[reader.userId, secondReader.userId]],
      );
    await waitFor("both readers' answers in the ledger", async () => {
      const rows = await readersLines();
      return rows.length === 2 && rows.every((r) => r.kinds.includes('answer'));
    });
    const byOwner = await readersLines();
    expect(byOwner).toHaveLength(2);
    for (const row of byOwner) expect(row.kinds).toContain('answer');
    // the only ingestion a reader paid for is their own book's
    const ingested = await sql<{ book_id: string }>(
      `SELECT DISTINCT book_id FROM usage_records WHERE owner_id = ANY($1) AND kind = 'contextualization'`,
      [[reader.userId, secondReader.userId]],
    );
    expect(ingested).toEqual([{ book_id: readerOwnBook }]);
    expect((await reader.req('GET', '/v1/usage')).body.turns).toBeGreaterThan(0);
  });

  const documentsOf = (r: RecordedRequest): any[] =>
    (r.body.messages as any[])
      .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .filter((b) => b.type === 'document');
  const requestFor = (question: string) =>
    s.fake.requests.find((r: RecordedRequest) => JSON.stringify(r.body.messages).includes(question))!;
  /** Text of the book's chapters 1 and 2: none of it may reach a reader who may no longer read the book. */
  const BOOK_WORDS = ['Silver Gannet', 'seven moorings', 'sea chart'];

  it("reads it whole for its readers: a second reader's first whole-book call reads the book from the cache the first one's wrote", async () => {
    const [third, fourth] = [
      as(`reader-${randomUUID()}`, { parley_tenant: tenant }),
      as(`reader-${randomUUID()}`, { parley_tenant: tenant }),
    ];
    const start = async (c: Client, instructions?: string) => {
      const id = (await c.req('POST', '/v1/conversations', { bookId, readingPosition: 2 })).body.id as string;
      const policy = { retrievalMode: 'whole-book', ...(instructions ? { instructions } : {}) };
      expect((await c.req('PATCH', `/v1/conversations/${id}`, { policy })).status).toBe(200);
      return id;
    };
    const q3 = `What did the captain unroll? ${randomUUID()}`;
    const q4 = `What was painted orange? ${randomUUID()}`;
    const a3 = await conversationHelpers(() => third).ask(await start(third), q3);
    const a4 = await conversationHelpers(() => fourth).ask(await start(fourth, 'Answer like a sailor.'), q4);
    for (const a of [a3, a4]) {
      expect(a.ending.type).toBe('AssistantReplied');
      expect((a.ending.data as { searchedInstead?: unknown }).searchedInstead).toBeUndefined();
    }
    const [one, two] = [requestFor(q3), requestFor(q4)];
    // the book is in both requests, byte for byte, before anything of the reader's
    expect(documentsOf(one).length).toBeGreaterThan(0);
    expect(JSON.stringify(documentsOf(two))).toBe(JSON.stringify(documentsOf(one)));
    expect(JSON.stringify(two.body.system)).toBe(JSON.stringify(one.body.system));
    // the first reader's call wrote the book to the cache; the second reader's first call read it
    const bookChars = JSON.stringify(documentsOf(one).map((d) => d.source)).length;
    expect(one.usage!.cache_read_input_tokens).toBeLessThan(bookChars / 4);
    expect(one.usage!.cache_creation_input_tokens).toBeGreaterThanOrEqual(bookChars / 5);
    expect(two.usage!.cache_read_input_tokens).toBeGreaterThanOrEqual(bookChars / 5);
  });

  it('reads none of it for a reader who left the tenant: not in their old conversation, not in a fork of it', async () => {
    const id = `mover-${randomUUID()}`;
    const before = as(id, { parley_tenant: tenant });
    const after = as(id, { parley_tenant: `${tenant}-other` });
    const old = (await before.req('POST', '/v1/conversations', { bookId, readingPosition: 2 })).body.id as string;
    const asked = await conversationHelpers(() => before).ask(old, 'How many moorings at low tide?');
    expect(asked.ending.type).toBe('AssistantReplied');
    expect(JSON.stringify(await conversationHelpers(() => before).events(old))).toContain('seven moorings');
    const versionBefore = (await before.req('GET', `/v1/conversations/${old}`)).body.version as number;

    // the same reader, now of another tenant: the book is not theirs to read
    expect((await after.req('GET', `/v1/books/${bookId}`)).status).toBe(404);
    const r = conversationHelpers(() => after);
    const searched = await r.ask(old, 'How many moorings were there, and which wreck is marked?');
    expect(searched.ending.type).toBe('AssistantReplied');
    const since = (await r.events(old)).filter((e) => e.version > versionBefore);
    const told = since.filter((e) => e.type === 'ToolResultRecorded');
    expect(told.length).toBeGreaterThan(0);
    expect(told.every((e) => (e.data as { content: string }).content.includes('no longer available'))).toBe(true);
    for (const word of BOOK_WORDS) expect(JSON.stringify(since)).not.toContain(word);

    // asking for the whole book sends none of it, and the answer says why it searched
    expect(
      (await after.req('PATCH', `/v1/conversations/${old}`, { policy: { retrievalMode: 'whole-book' } })).status,
    ).toBe(200);
    const q = `Read me the chart, whole. ${randomUUID()}`;
    const whole = await r.ask(old, q);
    expect(whole.ending.data).toMatchObject({ searchedInstead: { reason: 'books_unavailable' } });
    expect(documentsOf(requestFor(q))).toEqual([]);

    // a fork carries only the books its reader may read now; the reader of the tenant keeps it in theirs
    const version = (await after.req('GET', `/v1/conversations/${old}`)).body.version as number;
    const fork = await after.req('POST', `/v1/conversations/${old}/fork`, { version });
    expect(fork.status).toBe(201);
    expect(fork.body.bookIds).toEqual([]);
    const forked = await r.ask(fork.body.id, 'And the buoy, what colour?');
    expect(forked.ending.type).toBe('AssistantReplied');
    const forkedTurn = (await r.events(fork.body.id)).filter((e) => e.version > version);
    for (const word of [...BOOK_WORDS, 'painted orange']) expect(JSON.stringify(forkedTurn)).not.toContain(word);
    const stayed = await before.req('POST', `/v1/conversations/${old}/fork`, { version });
    expect(stayed.body.bookIds).toEqual([bookId]);
  });

  it('leaves the catalogue alone when a reader erases their account (DELETE /v1/me)', async () => {
    const erased = await secondReader.req('DELETE', '/v1/me');
    expect([202, 204]).toContain(erased.status);
    expect((await reader.req('GET', `/v1/books/${bookId}`)).status).toBe(200);
    expect((await publisher.req('GET', `/v1/books/${bookId}`)).status).toBe(200);
    expect(await sql('SELECT 1 FROM book_chunks WHERE book_id = $1 LIMIT 1', [bookId])).toHaveLength(1);
  });

  it("withdraws it: its data goes, readers' conversations stay readable and a next turn is answered", async () => {
    expect(readerTurnEvents.some((e) => e.type === 'ToolResultRecorded')).toBe(true);
    // a sentence of the book the reader's search quoted (not one the model's answer repeated)
    const answers = JSON.stringify(readerTurnEvents.filter((e) => e.type !== 'ToolResultRecorded'));
    const quoted = catalogueBook()
      .split('\n')
      .find((line) => line.length > 40 && JSON.stringify(readerTurnEvents).includes(line) && !answers.includes(line))!;
    expect(quoted).toBeDefined();
    const dump = async () =>
      (await run('pg_dump', ['--no-owner', s.stack.db.url], { maxBuffer: 512 * 1024 * 1024 })).stdout;
    expect(await dump()).toContain(quoted);
    expect((await publisher.req('DELETE', `/v1/books/${bookId}`)).status).toBe(204);

    expect((await reader.req('GET', `/v1/books/${bookId}`)).status).toBe(404);
    expect(await listIds(reader)).not.toContain(bookId);
    expect((await reader.req('POST', '/v1/conversations', { bookId })).status).toBe(404);
    for (const table of ['books', 'book_chunks', 'book_terms', 'book_uploads']) {
      const where = table === 'books' ? 'id' : 'book_id';
      expect({ table, rows: await sql(`SELECT 1 FROM ${table} WHERE ${where} = $1`, [bookId]) }).toEqual({
        table,
        rows: [],
      });
    }
    // none of its passages is left anywhere: neither the book's own rows nor what readers' searches quoted
    const after = await dump();
    expect(after).not.toContain(CANARY);
    expect(after).not.toContain(quoted);

    // the reader's conversation is theirs: still there, every event of it, the quoted passages taken out
    const shown = await reader.req('GET', `/v1/conversations/${readerConversation}`);
    expect(shown.status).toBe(200);
    const r1 = conversationHelpers(() => reader);
    const kept = (await r1.events(readerConversation)).slice(0, readerTurnEvents.length);
    expect(kept.map((e) => [e.version, e.type, e.id])).toEqual(readerTurnEvents.map((e) => [e.version, e.type, e.id]));
    for (const [i, e] of kept.entries()) {
      if (e.type === 'ToolResultRecorded') expect((e.data as { content: string }).content).toMatch(/withdrawn/);
      else expect(e).toEqual(readerTurnEvents[i]);
    }
    const messages = await reader.req('GET', `/v1/conversations/${readerConversation}/messages`);
    expect(JSON.stringify(messages.body)).not.toContain(quoted);
    // a later turn cannot search it: the model is told, and the turn is answered
    const { ending } = await r1.ask(readerConversation, 'What does the chart show?');
    expect(ending.type).toBe('AssistantReplied');
    const told = (await r1.events(readerConversation)).filter((e) => e.type === 'ToolResultRecorded').pop()!;
    expect((told.data as { content: string }).content).toContain('no longer available');
    expect((ending.data as { content: string }).content).toContain('no longer available');
    // the ledger keeps what the publisher paid for it
    expect(
      await sql(`SELECT 1 FROM usage_records WHERE book_id = $1 AND owner_id = $2 LIMIT 1`, [bookId, publisher.userId]),
    ).toHaveLength(1);
  });
});
