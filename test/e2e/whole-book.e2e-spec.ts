import { randomUUID } from 'node:crypto';
import { RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { waitForBook } from '../support/factories/books';
import { Client, clientFor } from '../support/stack';
import { useFakeStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

/** A bird per chapter: a question naming one finds its chapter's passage. */
const BIRDS = [
  'albatross',
  'barnacle',
  'cormorant',
  'dolphin',
  'egret',
  'flamingo',
  'gannet',
  'heron',
  'ibis',
  'jackdaw',
  'kestrel',
  'lapwing',
];
const FILLER = 'The tide went out and came back, and the keeper wrote the weather in the log. ';

/** A Markdown book of `chapters` chapters, each about `charsPerChapter` long, its bird named in its first passage. */
function birdBook(title: string, chapters: number, charsPerChapter: number): string {
  const lines = [`# ${title}`, ''];
  for (let c = 1; c <= chapters; c++) {
    const bird = BIRDS[(c - 1) % BIRDS.length];
    lines.push(
      `## Chapter ${c}: The ${bird}`,
      '',
      `In chapter ${c} the keeper saw a ${bird} marker${c}x over the rocks.`,
      '',
    );
    for (let n = 0; n * FILLER.length * 4 < charsPerChapter; n++) lines.push(FILLER.repeat(4), '');
  }
  return lines.join('\n');
}

async function upload(c: Client, title: string, chapters: number, charsPerChapter: number): Promise<string> {
  const r = await c.req('POST', '/v1/books', {
    title,
    format: 'markdown',
    content: birdBook(title, chapters, charsPerChapter),
  });
  expect(r.status).toBe(202);
  await waitForBook(c, r.body.id, 60_000);
  return r.body.id;
}

const documentsOf = (r: RecordedRequest): any[] =>
  (r.body.messages as any[])
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b) => b.type === 'document');
const bookTokens = (r: RecordedRequest) => Math.ceil(JSON.stringify(documentsOf(r)).length / 4);
const markers = (text: string) => [...text.matchAll(/marker(\d+)x/g)].map((m) => Number(m[1]));
/** the chapters of the documents of a request, by their marker */
const markersIn = (r: RecordedRequest) => markers(JSON.stringify(documentsOf(r)));

/**
 * Whole-book retrieval against the fake Messages API: the book up to the reading position as
 * cited documents, read from the prompt cache by every later turn, the model's citations as the
 * answer's; `auto` choosing it when the book fits WHOLE_BOOK_MAX_TOKENS.
 */
describe('whole-book retrieval (e2e)', () => {
  const s = useFakeStack({ env: { LLM_RETRIEVAL_MODE: 'auto', WHOLE_BOOK_MAX_TOKENS: '20000' } });
  let alice: Client;
  let sea: string;

  beforeAll(async () => {
    alice = clientFor(s.stack.base, `whole-${randomUUID()}`);
    sea = await upload(alice, 'Birds of the Sea', 12, 3_000);
  }, 90_000);
  beforeEach(() => s.fake.reset());

  async function ask(id: string, content: string) {
    const posted = await alice.req('POST', `/v1/conversations/${id}/messages`, { content });
    expect(posted.status).toBe(202);
    return waitFor(
      `the answer to "${content}"`,
      async () => {
        const evs = (await alice.req('GET', `/v1/conversations/${id}/events`)).body.items as any[];
        const ending = evs.find(
          (e) => ['AssistantReplied', 'TurnFailed'].includes(e.type) && e.data.turnId === posted.body.turnId,
        );
        if (ending?.type === 'TurnFailed') throw new Error(`turn failed: ${JSON.stringify(ending.data)}`);
        return ending?.data;
      },
      30_000,
    );
  }

  async function conversation(body: Record<string, unknown>, policy?: Record<string, unknown>): Promise<string> {
    const created = await alice.req('POST', '/v1/conversations', body);
    expect(created.status).toBe(201);
    if (policy) expect((await alice.req('PATCH', `/v1/conversations/${created.body.id}`, { policy })).status).toBe(200);
    return created.body.id;
  }

  it('sends the book up to the reading position once, reads it from the cache on the next turn, and cites what the model cited', async () => {
    const id = await conversation({ bookId: sea, readingPosition: 8 }, { retrievalMode: 'whole-book' });
    const first = await ask(id, 'What did the keeper see in the cormorant chapter?');
    const second = await ask(id, 'And the heron?');

    const calls = s.fake.requests;
    expect(s.fake.rejected).toEqual([]);
    expect(calls).toHaveLength(2);
    for (const r of calls) {
      const docs = documentsOf(r);
      expect(docs).toHaveLength(8); // one per chapter, 1..8
      expect(
        docs.every(
          (d) => d.citations?.enabled === true && d.source.type === 'content' && d.title === 'Birds of the Sea',
        ),
      ).toBe(true);
      expect(Math.max(...markers(r.rawBody))).toBe(8); // nothing past the reading position, anywhere
      expect(markersIn(r)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]); // the book once
      expect(r.body.tools).toBeUndefined();
    }
    const [u1, u2] = [first.usage, second.usage];
    expect(u1.cacheReadInputTokens).toBe(0);
    const book = bookTokens(calls[1]);
    expect(u2.cacheReadInputTokens).toBeGreaterThanOrEqual(0.9 * book);
    console.log(`whole-book: turn 2 read ${u2.cacheReadInputTokens} tokens from the cache; the book is ${book}`);

    expect(first.citations).toEqual([
      expect.objectContaining({ chapterIndex: 3, quote: expect.stringContaining('cormorant marker3x') }),
    ]);
    expect(first.content).toMatch(/\[1\]$/);
    expect(second.citations).toEqual([
      expect.objectContaining({ chapterIndex: 8, quote: expect.stringContaining('heron marker8x') }),
    ]);
    // the log keeps which passage was quoted, not its text: the quote is joined from the book when read
    const stored = await s.stack.db.pool.query<{ data: string }>(
      `SELECT data::text AS data FROM events WHERE stream_id = $1 AND type = 'AssistantReplied'`,
      [`conversation-${id}`],
    );
    expect(stored.rows).toHaveLength(2);
    for (const { data } of stored.rows) {
      const { citations } = JSON.parse(data) as { citations: object[] };
      expect(citations).toEqual([expect.objectContaining({ quoted: true })]);
      expect(JSON.stringify(citations)).not.toMatch(/marker[38]x/);
    }

    // the ledger holds what the provider reported (once the projection has caught up)
    const expected = {
      inputTokens: u1.inputTokens + u2.inputTokens,
      cacheReadInputTokens: u2.cacheReadInputTokens,
      cacheCreationInputTokens: u1.cacheCreationInputTokens + u2.cacheCreationInputTokens,
    };
    const usage = await waitFor(
      'the usage ledger to count both turns',
      async () => {
        const u = (await alice.req('GET', `/v1/conversations/${id}/usage`)).body;
        return u.turns === 2 ? u : undefined;
      },
      10_000,
    );
    expect(usage).toMatchObject(expected);
  });

  it('reads the earlier chapters from the cache when the reader moves forward', async () => {
    const id = await conversation({ bookId: sea, readingPosition: 5 }, { retrievalMode: 'whole-book' });
    await ask(id, 'What about the egret?');
    expect((await alice.req('PATCH', `/v1/conversations/${id}`, { readingPosition: 7 })).status).toBe(200);
    const moved = await ask(id, 'And the gannet?');

    const [before, after] = s.fake.requests;
    expect(markersIn(after)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(moved.citations[0]).toMatchObject({ chapterIndex: 7 });
    const read = moved.usage.cacheReadInputTokens;
    // chapters 1-5 come from the cache, as every reader at chapter 5 wrote them
    expect(read).toBeGreaterThanOrEqual(0.9 * bookTokens(before));
    console.log(
      `whole-book: moving from chapter 5 to 7 read ${read} of ${bookTokens(after)} book tokens from the cache (${Math.round((100 * read) / bookTokens(after))} %)`,
    );
  });

  it('auto reads a book that fits WHOLE_BOOK_MAX_TOKENS whole, and searches one that does not', async () => {
    const big = await upload(alice, 'Birds of the Ocean', 30, 6_000);
    const small = await conversation({ bookId: sea });
    await ask(small, 'Tell me about the albatross');
    const large = await conversation({ bookId: big });
    await ask(large, 'Tell me about the albatross');

    const [first, ...rest] = s.fake.requests;
    expect(documentsOf(first).length).toBe(12);
    expect(rest.length).toBeGreaterThan(0);
    expect(
      rest.every((r) => documentsOf(r).length === 0 && r.body.tools?.some((t: any) => t.name === 'search_book')),
    ).toBe(true);

    // whole-book is bounded by WHOLE_BOOK_MAX_TOKENS too: a reader's policy cannot make one call carry the big book
    const asked = s.fake.requests.length;
    const insisting = await conversation({ bookId: big }, { retrievalMode: 'whole-book' });
    const reply = await ask(insisting, 'Tell me about the heron');
    const calls = s.fake.requests.slice(asked);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((r) => documentsOf(r).length === 0)).toBe(true);
    // and its answer says why it searched
    expect(reply.searchedInstead).toMatchObject({ reason: 'books_too_large', limitTokens: 20_000 });
    expect(reply.searchedInstead.bookTokens).toBeGreaterThan(20_000);
    // the small book, under the same policy, is read whole, and its answer has nothing to explain
    const readWhole = await ask(await conversation({ bookId: sea }, { retrievalMode: 'whole-book' }), 'The ibis?');
    expect(readWhole.searchedInstead).toBeUndefined();
    expect(documentsOf(s.fake.requests[s.fake.requests.length - 1]).length).toBe(12);
  }, 90_000);

  it('sends several books, one document per chapter each, and names the book of each citation', async () => {
    const lake = await upload(alice, 'Birds of the Lake', 2, 1_000);
    const id = await conversation({ bookIds: [sea, lake], readingPosition: 2 }, { retrievalMode: 'whole-book' });
    const reply = await ask(id, 'What about the barnacle?');

    const docs = documentsOf(s.fake.requests[0]);
    expect(docs.map((d) => d.title)).toEqual([
      'Birds of the Sea',
      'Birds of the Sea',
      'Birds of the Lake',
      'Birds of the Lake',
    ]);
    expect(reply.citations[0]).toMatchObject({ bookId: sea, chapterIndex: 2 });
  });

  it('switches mode with a PATCH: the next turn reads the book, without the tool exchanges of the turns before', async () => {
    const id = await conversation({ bookId: sea, readingPosition: 4 }, { retrievalMode: 'tools' });
    await ask(id, 'What about the dolphin?');
    const searched = s.fake.requests.length;
    expect(s.fake.requests.every((r) => documentsOf(r).length === 0)).toBe(true);
    expect(
      (await alice.req('PATCH', `/v1/conversations/${id}`, { policy: { retrievalMode: 'whole-book' } })).status,
    ).toBe(200);
    const reply = await ask(id, 'And the cormorant?');

    const call = s.fake.requests[searched];
    expect(s.fake.requests).toHaveLength(searched + 1);
    expect(documentsOf(call)).toHaveLength(4);
    expect(call.rawBody).not.toContain('tool_use');
    expect(reply.citations[0]).toMatchObject({ chapterIndex: 3 });
  });

  it('answers a fork and the prompts of a batch from the book', async () => {
    const id = await conversation({ bookId: sea, readingPosition: 6 }, { retrievalMode: 'whole-book' });
    await ask(id, 'What about the flamingo?');
    const events = (await alice.req('GET', `/v1/conversations/${id}/events`)).body.items as any[];
    const fork = await alice.req('POST', `/v1/conversations/${id}/fork`, {
      version: events[events.length - 1].version,
    });
    expect(fork.status).toBe(201);
    const forked = await ask(fork.body.id, 'And the egret?');
    expect(forked.citations[0]).toMatchObject({ chapterIndex: 5 });
    // the fork is another reader at the same position: the book comes from the cache
    expect(forked.usage.cacheReadInputTokens).toBeGreaterThanOrEqual(0.9 * bookTokens(s.fake.requests[1]));

    const batch = await alice.req('POST', `/v1/conversations/${id}/batches`, {
      prompts: ['the albatross?', 'the barnacle?'],
      mode: 'independent',
      via: 'message-batches',
    });
    expect(batch.status).toBe(202);
    const done = await waitFor(
      'the batch',
      async () => {
        const b = (await alice.req('GET', `/v1/conversations/${id}/batches/${batch.body.batchId}`)).body;
        return b.status === 'completed' ? b : undefined;
      },
      60_000,
    );
    expect(done.items.map((i: any) => i.citations?.[0]?.chapterIndex)).toEqual([1, 2]);
    const batched = s.fake.requests.filter((r) => r.batchId);
    expect(batched).toHaveLength(2);
    expect(batched.every((r) => documentsOf(r).length === 6)).toBe(true);
  }, 90_000);

  it('refuses an unknown retrieval mode with a 400 and changes nothing', async () => {
    const id = await conversation({ bookId: sea });
    const r = await alice.req('PATCH', `/v1/conversations/${id}`, { policy: { retrievalMode: 'whole-library' } });
    expect(r.status).toBe(400);
    expect((await alice.req('GET', `/v1/conversations/${id}`)).body.policy).toEqual({});
    const auto = await alice.req('PATCH', `/v1/conversations/${id}`, { policy: { retrievalMode: 'auto' } });
    expect(auto.body.policy).toEqual({ retrievalMode: 'auto' });
  });
});
