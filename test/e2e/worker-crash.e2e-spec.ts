import { randomUUID } from 'node:crypto';
import { TURN_ENDING_TYPES } from '@parley/conversation';
import { expectOk, isEvent, turnOf } from '../support/api';
import { FakeAnthropic, FakeReply, RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { newBook } from '../support/factories/books';
import { Client, clientFor, startStack, Stack, fakeAnthropicEnv } from '../support/stack';
import { waitFor } from '../support/wait-for';

/** Slow enough that turns are mid-stream when a worker dies: ~2 s a call. */
function slowModel(req: RecordedRequest): FakeReply {
  const last = req.body.messages.at(-1);
  const hasResults = Array.isArray(last.content) && last.content.some((b: any) => b.type === 'tool_result');
  if (!hasResults)
    return {
      content: [{ type: 'tool_use', name: 'search_book', input: { query: 'lamp storm' } }],
      delayMsPerChunk: 400,
    };
  return {
    content: [{ type: 'text', text: 'The lamp was relit during the storm. '.repeat(8) + '[1]' }],
    delayMsPerChunk: 40,
  };
}

const newConversation = async (c: Client, bookId: string) =>
  expectOk(await c.api.POST('/v1/conversations', { body: { bookId } }), 201).id;
const postMessage = async (c: Client, id: string, content: string) =>
  expectOk(await c.api.POST('/v1/conversations/{id}/messages', { params: { path: { id } }, body: { content } }), 202);
const eventsOf = async (c: Client, id: string) =>
  expectOk(await c.api.GET('/v1/conversations/{id}/events', { params: { path: { id } } })).items;

const conversationOf = (r: RecordedRequest) =>
  JSON.stringify(r.body.messages[0]).match(/conversation ([0-9a-f-]{36})/)?.[1];

describe('worker crash (e2e): kill -9 of one of two workers mid-turn', () => {
  let fake: FakeAnthropic;
  let stack: Stack;

  beforeAll(async () => {
    fake = await FakeAnthropic.start({ defaultResponder: slowModel });
    stack = await startStack({
      apis: 1,
      workers: 2,
      env: {
        ...fakeAnthropicEnv(fake.url),
        WORKER_CONCURRENCY: '4',
      },
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
  });

  it('ends every turn exactly once, repeats no recorded tool call, and recovers well under 30 s', async () => {
    const alice = clientFor(stack.base, `crash-${randomUUID()}`);
    const { id: bookId } = await newBook(alice);
    const turns: Array<{ conversationId: string; turnId: string }> = [];
    for (let c = 0; c < 6; c++) {
      const conversationId = await newConversation(alice, bookId);
      for (let t = 0; t < 2; t++) {
        const { turnId } = await postMessage(alice, conversationId, `conversation ${conversationId} turn ${t}`);
        turns.push({ conversationId, turnId });
      }
    }
    await waitFor('LLM calls in flight on both workers', () => fake.requests.length >= 6, 20_000);
    const victim = stack.workers[0];
    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    await waitFor(
      'the killed worker to exit',
      () => victim.child.exitCode !== null || victim.child.signalCode !== null,
    );
    const cut = fake.requests.filter((r) => r.aborted && r.at <= killedAt + 1_000);

    const events = (id: string) => eventsOf(alice, id);
    await waitFor(
      'every turn to end',
      async () => {
        for (const t of turns) {
          if (
            !(await events(t.conversationId)).some((e) => TURN_ENDING_TYPES.includes(e.type) && turnOf(e) === t.turnId)
          )
            return false;
        }
        return true;
      },
      60_000,
      250,
    );
    const doneAt = Date.now();

    for (const conversationId of new Set(turns.map((t) => t.conversationId))) {
      const evs = await events(conversationId);
      for (const t of turns.filter((x) => x.conversationId === conversationId)) {
        const endings = evs.filter((e) => TURN_ENDING_TYPES.includes(e.type) && turnOf(e) === t.turnId);
        expect(endings.map((e) => e.type)).toEqual(['AssistantReplied']);
      }
      const results = evs.filter(isEvent('ToolResultRecorded')).map((e) => e.data.toolUseId);
      expect(new Set(results).size).toBe(results.length);
      const invoked = evs.filter(isEvent('ToolInvoked')).map((e) => e.data.toolUseId);
      expect(new Set(invoked).size).toBe(invoked.length);
    }

    // recovery: from the kill until the conversations cut off mid-call reach the LLM again
    const resumedAfter = cut.map((r) => {
      const next = fake.requests.find((x) => x.at > killedAt && conversationOf(x) === conversationOf(r) && x !== r);
      return next ? next.at - killedAt : Infinity;
    });
    expect(cut.length).toBeGreaterThan(0);
    const worst = Math.max(...resumedAfter);
    expect(worst).toBeLessThan(30_000);
    console.log(
      `worker crash: ${cut.length} LLM calls cut; picked up again after ${resumedAfter.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s; all ${turns.length} turns ended ${((doneAt - killedAt) / 1000).toFixed(1)} s after the kill`,
    );
  }, 120_000);

  it('hands turns a stopping worker had in flight (SIGTERM) to another worker, which ends them', async () => {
    const alice = clientFor(stack.base, `stop-${randomUUID()}`);
    const { id: bookId } = await newBook(alice);
    const live = stack.workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    const fresh = await stack.startWorker();
    const before = fake.requests.length;
    const turns: Array<{ conversationId: string; turnId: string }> = [];
    for (let c = 0; c < 4; c++) {
      const conversationId = await newConversation(alice, bookId);
      const { turnId } = await postMessage(alice, conversationId, `conversation ${conversationId}`);
      turns.push({ conversationId, turnId });
    }
    await waitFor('LLM calls in flight', () => fake.requests.length >= before + 4, 20_000);
    await live[0].kill('SIGTERM');
    const endings = async (t: { conversationId: string; turnId: string }) =>
      (await eventsOf(alice, t.conversationId)).filter(
        (e) => TURN_ENDING_TYPES.includes(e.type) && turnOf(e) === t.turnId,
      );
    await waitFor(
      'every turn to end',
      async () => (await Promise.all(turns.map(endings))).every((e) => e.length > 0),
      60_000,
      250,
    );
    for (const t of turns) expect((await endings(t)).map((e) => e.type)).toEqual(['AssistantReplied']);
    expect(fresh.child.exitCode).toBeNull();
  }, 90_000);
});
