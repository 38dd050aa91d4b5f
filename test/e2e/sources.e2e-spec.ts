import { randomUUID } from 'node:crypto';
import { ConversationEvent, conversationStreamId } from '@parley/conversation';
import { EventStore, NewEvent } from '@parley/event-store';
import { expectOk } from '../support/api';
import { defaultReply } from '../support/fake-anthropic/default-responder';
import { FakeReply, RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { newBook, waitForBook } from '../support/factories/books';
import { conversationHelpers } from '../support/conversation-helpers';
import { clientFor, Client } from '../support/stack';
import { useFakeStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

const strip = (x: unknown) => JSON.stringify(x, (k, v) => (k === 'cache_control' ? undefined : v));
const lastUser = (r: RecordedRequest) => JSON.stringify(r.body.messages[r.body.messages.length - 1]);

/** Several books per conversation (bookIds, SourcesChanged): searched together, cited by book, changed mid-conversation. */
describe('conversation sources (e2e, real SDK against the fake Messages API)', () => {
  const s = useFakeStack({
    fake: {
      defaultResponder: (req): FakeReply => {
        const toolsAllowed = req.body.tools?.length && req.body.tool_choice?.type !== 'none';
        const only = /ONLY ([0-9a-f-]{36})/.exec(lastUser(req));
        if (only && toolsAllowed)
          return {
            content: [{ type: 'tool_use', name: 'search_book', input: { query: 'lamp roses', book: only[1] } }],
          };
        return defaultReply(req);
      },
    },
  });
  let alice: Client;
  let lighthouse: string;
  let garden: string;

  beforeAll(async () => {
    alice = clientFor(s.stack.base, `reader-${randomUUID()}`);
    lighthouse = (await newBook(alice)).id;
    const upload = expectOk(
      await alice.api.POST('/v1/books', {
        body: {
          title: 'The Rose Garden',
          author: 'A. Tester',
          format: 'markdown',
          content:
            '# The Rose Garden\n\n## Chapter 1: Roses\n\nThe gardener Tobias planted red roses beside the lamp post of the old garden.\n',
        },
      }),
      202,
    );
    garden = (await waitForBook(alice, upload.id)).id;
  });

  const create = (body: object) => alice.req('POST', '/v1/conversations', body);
  const patch = (id: string, body: object) => alice.req('PATCH', `/v1/conversations/${id}`, body);
  const { events, ask: askAndEnd } = conversationHelpers(() => alice);
  const ask = async (id: string, content: string) => (await askAndEnd(id, content)).ending;

  it('searches every book of the conversation and names the book of each passage', async () => {
    const created = await create({ bookIds: [lighthouse, garden] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ bookIds: [lighthouse, garden], bookId: lighthouse });
    const id = created.body.id;
    await ask(id, 'lamp roses gardener Marisol');
    const result = (await events(id)).find((e) => e.type === 'ToolResultRecorded')!;
    const chunks = (result.data as { chunks: Array<{ bookId?: string }> }).chunks;
    expect(new Set(chunks.map((c) => c.bookId))).toEqual(new Set([lighthouse, garden]));
    expect((result.data as { content: string }).content).toContain('The Rose Garden');
    // the list read model finds it under either book
    await waitFor('the list read model', async () => {
      const list = (await alice.req('GET', `/v1/conversations?bookId=${garden}`)).body;
      return (
        list.items.some((c: { id: string; bookIds: string[] }) => c.id === id && c.bookIds.length === 2) || undefined
      );
    });
  });

  it('searches the one book the model names with `book`', async () => {
    const id = (await create({ bookIds: [lighthouse, garden] })).body.id;
    await ask(id, `ONLY ${garden}: where are the roses?`);
    const result = (await events(id)).find((e) => e.type === 'ToolResultRecorded')!;
    const chunks = (result.data as { chunks: Array<{ bookId?: string }> }).chunks;
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((c) => c.bookId === garden)).toBe(true);
  });

  it('changes the books mid-conversation (SourcesChanged) and the prompt cache still reads the prefix', async () => {
    const id = (await create({ bookId: lighthouse })).body.id;
    await ask(id, 'Who is Marisol?');
    const before = s.fake.requests.filter((r) => JSON.stringify(r.body.messages).includes('Who is Marisol?')).pop()!;
    const changed = await patch(id, { bookIds: [lighthouse, garden] });
    expect(changed.status).toBe(200);
    expect(changed.body.bookIds).toEqual([lighthouse, garden]);
    const log = await events(id);
    const sources = log.find((e) => e.type === 'SourcesChanged')!;
    expect(sources.data).toEqual({
      bookIds: [lighthouse, garden],
      books: [
        { id: lighthouse, title: 'The Lighthouse Keeper' },
        { id: garden, title: 'The Rose Garden' },
      ],
    });
    expect((await alice.req('GET', `/v1/conversations/${id}?version=${sources.version - 1}`)).body.bookIds).toEqual([
      lighthouse,
    ]);
    const reply = await ask(id, 'And who planted the roses?');
    const after = s.fake.requests.find((r) => lastUser(r).includes('And who planted the roses?'))!;
    // the tools and the system prompt did not move, nor the earlier turns: the cache reads them
    expect(strip(after.body.tools)).toBe(strip(before.body.tools));
    expect(strip(after.body.system)).toBe(strip(before.body.system));
    expect(strip(after.body.messages.slice(0, before.body.messages.length))).toBe(strip(before.body.messages));
    expect(lastUser(after)).toContain('search_book now searches: \\"The Lighthouse Keeper\\"');
    expect((reply.data as { usage: { cacheReadInputTokens: number } }).usage.cacheReadInputTokens).toBeGreaterThan(0);
    // unchanged: nothing appended
    const again = await patch(id, { bookIds: [lighthouse, garden] });
    expect(again.body.version).toBe((await alice.req('GET', `/v1/conversations/${id}`)).body.version);
  });

  it("refuses unknown, another reader's, duplicate or too many books with a 4xx, and changes nothing", async () => {
    const bob = clientFor(s.stack.base, `reader-${randomUUID()}`);
    const bobsBook = (await newBook(bob)).id;
    const id = (await create({ bookId: lighthouse })).body.id;
    const version = (await alice.req('GET', `/v1/conversations/${id}`)).body.version;
    const cases: Array<[object, number]> = [
      [{ bookIds: [lighthouse, randomUUID()] }, 404],
      [{ bookIds: [bobsBook] }, 404],
      [{ bookIds: [garden, garden] }, 400],
      [{ bookIds: Array.from({ length: 21 }, () => randomUUID()) }, 400],
      [{ bookIds: ['not-a-uuid'] }, 400],
      [{ bookIds: 'nope' }, 400],
    ];
    for (const [body, status] of cases) {
      expect({ body, status: (await patch(id, body)).status }).toEqual({ body, status });
      expect({ body, status: (await create(body)).status }).toEqual({ body, status });
    }
    expect((await create({ bookId: lighthouse, bookIds: [garden] })).status).toBe(400);
    expect((await alice.req('GET', `/v1/conversations/${id}`)).body.version).toBe(version);
  });

  it('serves and continues a conversation started before several books (bookId only)', async () => {
    const id = randomUUID();
    const started: NewEvent<ConversationEvent> = {
      id: randomUUID(),
      type: 'ConversationStarted',
      // as the release before wrote it: no bookIds
      data: { ownerId: alice.userId, bookId: lighthouse, title: null, readingPosition: null },
      metadata: {},
    };
    await new EventStore(s.stack.db.pool).append(conversationStreamId(id), [started], { expectedVersion: 'no_stream' });
    expect((await alice.req('GET', `/v1/conversations/${id}`)).body).toMatchObject({
      bookId: lighthouse,
      bookIds: [lighthouse],
    });
    const reply = await ask(id, 'Who is Marisol?');
    expect((reply.data as { citations: unknown[] }).citations.length).toBeGreaterThan(0);
    expect((await patch(id, { bookIds: [garden] })).body.bookIds).toEqual([garden]);
  });
});
