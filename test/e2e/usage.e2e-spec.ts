import { randomUUID } from 'node:crypto';
import { EventStore } from '@parley/event-store';
import { priceTableWith } from '@parley/agent';
import { rebuildReadModels } from '@parley/read-models';
import { Envelope, expectOk } from '../support/api';
import { defaultReply } from '../support/fake-anthropic/default-responder';
import { apiError, FakeError, FakeReply } from '../support/fake-anthropic/fake-anthropic.server';
import { clientFor } from '../support/stack';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

/** The shipped prices (no LLM_PRICES here). */
const { costUsd } = priceTableWith();

type Usage = {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
};

/** What the fake's message_start says of a slow answer's input. */
const slowUsage = { input_tokens: 5000, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };

/** GET /v1/conversations/:id/usage and GET /v1/usage: read models of what the turns used. */
describe('usage (e2e, real SDK against the fake Messages API)', () => {
  const s = useReaderStack({
    fake: {
      defaultResponder: (req): FakeReply | FakeError =>
        JSON.stringify(req.body.messages).includes('FAILNOW')
          ? apiError(400, 'refused for the test')
          : JSON.stringify(req.body.messages).includes('SLOWLY')
            ? { content: [{ type: 'text', text: 'word '.repeat(400) }], delayMsPerChunk: 40, usage: slowUsage }
            : defaultReply(req),
    },
    env: { LLM_MODEL: 'claude-sonnet-5-5' },
  });
  const { conversation, events, ask } = s;
  const usageOf = async (id: string) => (await s.alice.req('GET', `/v1/conversations/${id}/usage`)).body;
  const usageWithin = async (query = '') => s.alice.req('GET', `/v1/usage${query}`);
  /** what the log says, summed as the read model should */
  const fromLog = (log: Envelope[]) => {
    const replies = log
      .filter((e) => e.type === 'AssistantReplied')
      .map((e) => e.data as { usage: Usage; costUsd: number });
    const sum = (k: keyof Usage) => replies.reduce((n, r) => n + r.usage[k], 0);
    return {
      turns: log.filter((e) => ['AssistantReplied', 'TurnFailed', 'TurnCancelled'].includes(e.type)).length,
      toolCalls: log.filter((e) => e.type === 'ToolInvoked').length,
      failures: log.filter((e) => e.type === 'TurnFailed').length,
      inputTokens: sum('inputTokens'),
      outputTokens: sum('outputTokens'),
      cacheReadInputTokens: sum('cacheReadInputTokens'),
      cacheCreationInputTokens: sum('cacheCreationInputTokens'),
      costUsd: Math.round(replies.reduce((n, r) => n + r.costUsd, 0) * 1e6) / 1e6,
    };
  };
  /** the read model follows the log a moment behind */
  const settled = async <T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean) =>
    waitFor(what, async () => {
      const v = await read();
      return ok(v) ? v : undefined;
    });

  it("sums a conversation's turns, tool calls, failures, tokens and cost, by model, and the caller's within a time range", async () => {
    const first = await conversation();
    await ask(first, 'Who is Marisol?');
    await ask(first, 'What did she find in the lamp room?');
    await ask(first, 'FAILNOW please');
    const expected = fromLog(await events(first));
    expect(expected).toMatchObject({ turns: 3, toolCalls: 2, failures: 1 });
    expect(expected.inputTokens + expected.cacheReadInputTokens).toBeGreaterThan(0);
    const usage = await settled(
      'the usage read model',
      () => usageOf(first),
      (u) => u.turns === 3,
    );
    expect(usage).toMatchObject(expected);
    expect(usage.byModel['claude-sonnet-5-5']).toMatchObject({ turns: 2, toolCalls: 2, failures: 0 });
    const input = expected.inputTokens + expected.cacheReadInputTokens + expected.cacheCreationInputTokens;
    expect(usage.cacheHitRate).toBeCloseTo(expected.cacheReadInputTokens / input, 3);

    const between = new Date().toISOString();
    const second = await conversation();
    await ask(second, 'And the ship?');
    const both = await settled(
      'both conversations',
      async () => (await usageWithin()).body,
      (u) => u.turns === 4,
    );
    expect(both.toolCalls).toBe(3);
    const after = (await usageWithin(`?from=${encodeURIComponent(between)}`)).body;
    expect(after).toMatchObject(fromLog(await events(second)));
    const before = (await usageWithin(`?to=${encodeURIComponent(between)}`)).body;
    expect(before).toMatchObject(expected);
  }, 120_000);

  it('rebuilds the usage read model to the same figures', async () => {
    const id = await conversation();
    await ask(id, 'Who kept the lamp?');
    // the read model has this turn too (it follows the log a moment behind)
    await settled(
      'the usage read model',
      () => usageOf(id),
      (u) => u.turns === 1,
    );
    const before = await usageWithin();
    await rebuildReadModels(new EventStore(s.stack.db.pool));
    expect((await usageWithin()).body).toEqual(before.body);
    expect(await usageOf(id)).toMatchObject(fromLog(await events(id)));
  }, 120_000);

  it('counts a call cancelled while the model streams: the input of its message_start and the output streamed', async () => {
    const since = new Date().toISOString();
    const id = await conversation();
    const { turnId } = expectOk(
      await s.alice.api.POST('/v1/conversations/{id}/messages', {
        params: { path: { id } },
        body: { content: 'Tell me SLOWLY about the lamp' },
      }),
      202,
    );
    await s.fake.waitFor('the slow stream', () => s.fake.requests.some((r) => r.rawBody.includes('SLOWLY')));
    await new Promise((r) => setTimeout(r, 400)); // a few words streamed
    expectOk(
      await s.alice.api.POST('/v1/conversations/{id}/turns/{turnId}/cancel', { params: { path: { id, turnId } } }),
      202,
    );
    const stopped = await waitFor('ModelCallStopped in the log', async () =>
      (await events(id)).find((e) => e.type === 'ModelCallStopped'),
    );
    expect(stopped.data).toMatchObject({ turnId, iteration: 1, model: 'claude-sonnet-5-5', reason: 'cancelled' });
    const billed = (stopped.data as { usage: Usage }).usage;
    expect(billed.inputTokens).toBe(slowUsage.input_tokens);
    expect(billed.outputTokens).toBeGreaterThan(1);
    expect((await events(id)).filter((e) => e.type === 'TurnCancelled')).toHaveLength(1);

    const expectedCost = costUsd('claude-sonnet-5-5', billed);
    expect(expectedCost).toBeGreaterThan(0);
    const usage = await settled(
      'the usage read model',
      () => usageOf(id),
      (u) => u.inputTokens > 0,
    );
    expect(usage).toMatchObject({ turns: 1, toolCalls: 0, failures: 0, ...billed, costUsd: expectedCost });
    expect(usage.byModel['claude-sonnet-5-5']).toMatchObject({ ...billed, costUsd: expectedCost });
    const owner = (await usageWithin(`?from=${encodeURIComponent(since)}`)).body;
    expect(owner).toMatchObject({ turns: 1, ...billed, costUsd: expectedCost });
  }, 60_000);

  it("answers 404 for another reader's or a deleted conversation, and 400 for a bad range", async () => {
    const id = await conversation();
    const bob = clientFor(s.stack.base, `reader-${randomUUID()}`);
    expect((await bob.req('GET', `/v1/conversations/${id}/usage`)).status).toBe(404);
    expect((await s.alice.req('DELETE', `/v1/conversations/${id}`)).status).toBe(204);
    expect((await s.alice.req('GET', `/v1/conversations/${id}/usage`)).status).toBe(404);
    expect((await s.alice.req('GET', `/v1/conversations/not-a-uuid/usage`)).status).toBe(400);
    for (const q of [
      '?from=yesterday',
      '?to=2026-13-01T00:00:00Z',
      '?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z',
    ]) {
      const r = await usageWithin(q);
      expect({ q, status: r.status }).toEqual({ q, status: 400 });
    }
    // another reader has used nothing
    expect((await bob.req('GET', '/v1/usage')).body).toMatchObject({
      turns: 0,
      costUsd: 0,
      cacheHitRate: 0,
      byModel: {},
    });
  }, 60_000);
});
