import { randomUUID } from 'node:crypto';
import { expectEvent, expectOk, isEvent } from '../support/api';
import { FakeAnthropic, FakeReply, RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { newBook } from '../support/factories/books';
import { clientFor, startStack, Stack, fakeAnthropicEnv } from '../support/stack';
import { waitFor } from '../support/wait-for';

const isReformulation = (r: RecordedRequest) => JSON.stringify(r.body.messages).includes('self-contained search query');

function model(req: RecordedRequest): FakeReply {
  if (isReformulation(req)) return { content: [{ type: 'text', text: 'green leather logbook last entry ship' }] };
  return { content: [{ type: 'text', text: 'The logbook names the Wandering Heron [1].' }] };
}

/** LLM_RETRIEVAL_MODE=always-retrieve: reformulate, search, answer with the passages, no tools offered. */
describe('always-retrieve fallback (e2e)', () => {
  let fake: FakeAnthropic;
  let stack: Stack;

  beforeAll(async () => {
    fake = await FakeAnthropic.start({ defaultResponder: model });
    stack = await startStack({
      env: {
        ...fakeAnthropicEnv(fake.url),
        LLM_RETRIEVAL_MODE: 'always-retrieve',
      },
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
  });

  it('reformulates from the conversation, searches, and answers citing the passages', async () => {
    const alice = clientFor(stack.base, `retrieve-${randomUUID()}`);
    const { id: bookId } = await newBook(alice);
    const { id } = expectOk(await alice.api.POST('/v1/conversations', { body: { bookId } }), 201);
    const { turnId } = expectOk(
      await alice.api.POST('/v1/conversations/{id}/messages', {
        params: { path: { id } },
        body: { content: 'What was the ship in it called?' },
      }),
      202,
    );
    const events = async () =>
      expectOk(await alice.api.GET('/v1/conversations/{id}/events', { params: { path: { id } } })).items;
    const reply = await waitFor(
      'the reply',
      async () => (await events()).filter(isEvent('AssistantReplied')).find((e) => e.data.turnId === turnId),
      20_000,
    );
    const evs = await events();
    expect(evs.map((e) => e.type)).toEqual([
      'ConversationStarted',
      'UserMessagePosted',
      'ToolInvoked',
      'ToolResultRecorded',
      'AssistantReplied',
    ]);
    expect(expectEvent(evs[2], 'ToolInvoked').data).toMatchObject({
      name: 'search_book',
      input: { query: 'green leather logbook last entry ship' },
    });
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests.every((r) => r.body.tools === undefined)).toBe(true);
    expect(isReformulation(fake.requests[0])).toBe(true);
    expect(JSON.stringify(fake.requests[1].body.messages)).toContain('Wandering Heron');
    expect(reply.data.citations[0]).toMatchObject({ chapter: expect.stringContaining('Lamp') });
    expect(reply.data.iterations).toBe(2);
  });
});
