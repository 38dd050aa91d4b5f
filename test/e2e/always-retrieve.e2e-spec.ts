import { randomUUID } from 'node:crypto';
import { expectEvent, expectOk, isEvent } from '../support/api';
import { FakeReply, RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { newBook } from '../support/factories/books';
import { clientFor } from '../support/stack';
import { useFakeStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

const isReformulation = (r: RecordedRequest) => JSON.stringify(r.body.messages).includes('self-contained search query');
const isHyde = (r: RecordedRequest) => JSON.stringify(r.body.messages).includes('Write a short passage');
const HYDE_PASSAGE =
  'At midnight the storm broke over Vell.\nMarisol brought oil up from the cellar and relit the lamp.';

function model(req: RecordedRequest): FakeReply {
  if (isReformulation(req)) return { content: [{ type: 'text', text: 'green leather logbook last entry ship' }] };
  if (isHyde(req)) return { content: [{ type: 'text', text: HYDE_PASSAGE }] };
  return { content: [{ type: 'text', text: 'The logbook names the Wandering Heron [1].' }] };
}

/**
 * LLM_RETRIEVAL_MODE=always-retrieve: reformulate and (RETRIEVAL_HYDE, on by default with the
 * anthropic provider) write a hypothetical passage, search with both, answer with the passages,
 * no tools offered.
 */
describe('always-retrieve fallback (e2e)', () => {
  const s = useFakeStack({ fake: { defaultResponder: model }, env: { LLM_RETRIEVAL_MODE: 'always-retrieve' } });

  it('reformulates from the conversation, searches, and answers citing the passages', async () => {
    const alice = clientFor(s.stack.base, `retrieve-${randomUUID()}`);
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
      'ToolInvoked',
      'ToolResultRecorded',
      'ToolResultRecorded',
      'AssistantReplied',
    ]);
    const [query, hyde] = [expectEvent(evs[2], 'ToolInvoked').data, expectEvent(evs[3], 'ToolInvoked').data];
    expect(query).toMatchObject({ name: 'search_book', input: { query: 'green leather logbook last entry ship' } });
    // the HyDE passage is searched too, on one line
    expect(hyde).toMatchObject({ name: 'search_book', input: { query: HYDE_PASSAGE.replace('\n', ' ') } });
    expect(hyde.toolUseId).toMatch(/^hyde_/);
    const [r1, r2] = [expectEvent(evs[4], 'ToolResultRecorded').data, expectEvent(evs[5], 'ToolResultRecorded').data];
    expect(r1.chunks?.[0]).toMatchObject({ chapter: expect.stringContaining('Lamp') });
    // the passage finds the storm chapter first; the lamp room, which the query already found, is
    // not repeated although the passage says "lamp"
    expect(r2.chunks?.[0]).toMatchObject({ chapter: expect.stringContaining('Storm') });
    expect(r2.chunks?.some((c) => c.chapter.includes('Lamp'))).toBe(false);
    expect(r2.chunks?.some((c) => r1.chunks?.some((d) => d.chunkId === c.chunkId))).toBe(false);

    // reformulation and HyDE in parallel, then the answer: all valid Messages requests without
    // tools or sampling parameters (the fake rejects those), HyDE small and with its own prompt
    expect(s.fake.rejected).toEqual([]);
    expect(s.fake.requests).toHaveLength(3);
    expect(s.fake.requests.every((r) => r.body.tools === undefined)).toBe(true);
    expect(s.fake.requests.some((r) => ['temperature', 'top_p', 'top_k'].some((p) => p in r.body))).toBe(false);
    expect(s.fake.requests.slice(0, 2).filter(isReformulation)).toHaveLength(1);
    const hydeReq = s.fake.requests.slice(0, 2).find(isHyde)!;
    expect(hydeReq.body).toMatchObject({ max_tokens: 300, messages: [{ role: 'user' }] });
    expect(JSON.stringify(hydeReq.body.messages)).toContain('What was the ship in it called?');
    expect(JSON.stringify(hydeReq.body.messages)).toContain('The Lighthouse Keeper');
    const answer = JSON.stringify(s.fake.requests[2].body.messages);
    expect(answer).toContain('Wandering Heron');
    expect(answer).toContain('hidden in the cellar');
    expect(reply.data.citations[0]).toMatchObject({ chapter: expect.stringContaining('Lamp') });
    expect(reply.data.iterations).toBe(2);
  });
});
