import { randomUUID } from 'node:crypto';
import { TURN_ENDING_TYPES } from '@parley/conversation';
import { expectOk, expectProblem, turnOf } from '../support/api';
import { clientFor, Client } from '../support/stack';
import { conversationHelpers } from '../support/conversation-helpers';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

/** Far below what one answer of the fake model costs at claude-sonnet prices: one turn spends it. */
const BUDGET_USD = 0.0001;

/** BUDGET_USD_PER_MONTH and the token's parley_budget_usd_per_month: posts refused once a month's spend reaches them. */
describe('reader budgets (e2e, real SDK against the fake Messages API)', () => {
  const s = useReaderStack({ env: { LLM_MODEL: 'claude-sonnet-5-5', BUDGET_USD_PER_MONTH: String(BUDGET_USD) } });
  const { events } = s;
  const usage = async (who: Client) => expectOk(await who.api.GET('/v1/usage'));
  const versionOf = async (id: string) => (await s.alice.req('GET', `/v1/conversations/${id}`)).body.version as number;
  const turnEnded = (id: string, turnId: string) =>
    waitFor(`turn ${turnId} to end`, async () =>
      (await events(id)).find((e) => turnOf(e) === turnId && TURN_ENDING_TYPES.includes(e.type)),
    );
  const monthStart = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)).toISOString();
  const nextMonthStart = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();

  let id: string;
  const firstKey = randomUUID();
  let firstAnswer: { turnId: string; messageId: string };

  it('allows posts under the budget, and GET /v1/usage shows what is left', async () => {
    const before = await usage(s.alice);
    const now = new Date();
    expect(before.budget).toEqual({
      limitUsd: BUDGET_USD,
      spentUsd: 0,
      leftUsd: BUDGET_USD,
      periodStart: monthStart(now),
      resetsAt: nextMonthStart(now),
    });
    // no book: the turn is one model call, which the worker's check before it lets through
    id = expectOk(await s.alice.api.POST('/v1/conversations', { body: {} }), 201).id;
    const posted = await s.alice.req(
      'POST',
      `/v1/conversations/${id}/messages`,
      { content: 'Who is Marisol?' },
      { 'Idempotency-Key': firstKey },
    );
    expect(posted.status).toBe(202);
    firstAnswer = posted.body;
    expect(await turnEnded(id, firstAnswer.turnId)).toMatchObject({ type: 'AssistantReplied' });
  }, 60_000);

  it('refuses a post and a batch with 402 budget_exceeded once the month is spent, appending nothing', async () => {
    // the usage ledger follows the log a moment behind: wait for the answer's line
    const spent = await waitFor('the answer to reach the ledger', async () => {
      const u = await usage(s.alice);
      return u.turns === 1 ? u : undefined;
    });
    expect(spent.budget.spentUsd).toBeGreaterThanOrEqual(BUDGET_USD);
    expect(spent.budget).toMatchObject({ limitUsd: BUDGET_USD, spentUsd: spent.costUsd, leftUsd: 0 });

    const version = await versionOf(id);
    const eventCount = (await events(id)).length;
    const refused = await s.alice.api.POST('/v1/conversations/{id}/messages', {
      params: { path: { id } },
      body: { content: 'And the lamp room?' },
    });
    const problem = expectProblem(refused, 402);
    const now = new Date();
    expect(problem).toMatchObject({
      type: '/problems/budget_exceeded',
      status: 402,
      code: 'budget_exceeded',
      budgetUsd: BUDGET_USD,
      spentUsd: spent.costUsd,
      resetsAt: nextMonthStart(now),
    });
    expect(problem.detail).toContain(nextMonthStart(now));
    const retryAfter = Number(refused.response.headers.get('retry-after'));
    const untilReset = (Date.parse(nextMonthStart(now)) - now.getTime()) / 1000;
    expect(retryAfter).toBe(problem.retryAfter);
    expect(Math.abs(retryAfter - untilReset)).toBeLessThan(30);

    const batch = await s.alice.req('POST', `/v1/conversations/${id}/batches`, {
      prompts: ['one', 'two'],
      mode: 'independent',
    });
    expect(batch.status).toBe(402);
    expect(batch.body).toMatchObject({ code: 'budget_exceeded', budgetUsd: BUDGET_USD });
    expect(batch.headers.get('retry-after')).toMatch(/^\d+$/);

    expect(await versionOf(id)).toBe(version);
    expect((await events(id)).length).toBe(eventCount);
    const conversations = (await s.alice.req('GET', '/v1/conversations')).body.items;
    expect(conversations).toHaveLength(1); // an independent batch forks nothing either
    expect((await usage(s.alice)).budget.leftUsd).toBe(0);
  }, 60_000);

  it('still answers a repeat of an accepted post (same Idempotency-Key) with its first answer', async () => {
    const repeat = await s.alice.req(
      'POST',
      `/v1/conversations/${id}/messages`,
      { content: 'Who is Marisol?' },
      { 'Idempotency-Key': firstKey },
    );
    expect(repeat.status).toBe(202);
    expect(repeat.body).toMatchObject(firstAnswer);
    // a new key is a new post
    const fresh = await s.alice.req(
      'POST',
      `/v1/conversations/${id}/messages`,
      { content: 'Who is Marisol?' },
      { 'Idempotency-Key': randomUUID() },
    );
    expect(fresh.status).toBe(402);
  }, 30_000);

  it("lets a token's parley_budget_usd_per_month override the server's, up or down, and refuses a malformed one", async () => {
    const richer = clientFor(s.stack.base, s.alice.userId, { claims: { parley_budget_usd_per_month: 1000 } });
    const version = await versionOf(id);
    const posted = expectOk(
      await richer.api.POST('/v1/conversations/{id}/messages', {
        params: { path: { id } },
        body: { content: 'More?' },
      }),
      202,
    );
    expect(posted.version).toBeGreaterThan(version);
    expect(await turnEnded(id, posted.turnId)).toMatchObject({ type: 'AssistantReplied' });
    const standing = (await usage(richer)).budget;
    expect(standing.limitUsd).toBe(1000);
    expect(standing.leftUsd).toBeCloseTo(1000 - standing.spentUsd, 6);

    // a budget of 0 refuses a reader who has spent nothing
    const none = clientFor(s.stack.base, `reader-${randomUUID()}`, { claims: { parley_budget_usd_per_month: 0 } });
    const own = expectOk(await none.api.POST('/v1/conversations', { body: {} }), 201).id;
    const refused = await none.req('POST', `/v1/conversations/${own}/messages`, { content: 'hi' });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'budget_exceeded', budgetUsd: 0, spentUsd: 0 });

    // a claim that is not a number ≥ 0 makes the token invalid
    for (const claim of ['1000', -1, { usd: 5 }]) {
      const bad = clientFor(s.stack.base, s.alice.userId, { claims: { parley_budget_usd_per_month: claim } });
      const r = await bad.req('GET', '/v1/usage');
      expect({ claim, status: r.status, code: r.body?.code }).toEqual({ claim, status: 401, code: 'token_invalid' });
    }
  }, 60_000);

  /** A reader of their own, whose token carries `budgetUsd`, with their own conversation helpers. */
  const readerWithBudget = (budgetUsd: number) => {
    const client = clientFor(s.stack.base, `reader-${randomUUID()}`, {
      claims: { parley_budget_usd_per_month: budgetUsd },
    });
    return { client, ...conversationHelpers(() => client) };
  };
  /** A batch once every prompt has ended, with each item's ending event read from its conversation. */
  const endedBatch = async (reader: ReturnType<typeof readerWithBudget>, id: string, batchId: string) => {
    const batch = await waitFor(
      `batch ${batchId} to complete`,
      async () => {
        const view = (await reader.client.req('GET', `/v1/conversations/${id}/batches/${batchId}`)).body;
        return view.status === 'running' ? undefined : view;
      },
      60_000,
    );
    const endings = [];
    for (const item of batch.items as Array<{ conversationId: string; turnId: string }>) {
      const events = await reader.events(item.conversationId);
      endings.push(events.find((e) => turnOf(e) === item.turnId && TURN_ENDING_TYPES.includes(e.type))!);
    }
    return { batch, endings };
  };

  it('holds every model call of a sequential batch to the budget, not only its start', async () => {
    // a fresh reader may start a batch (nothing spent); its first answer spends the whole budget
    const bob = readerWithBudget(BUDGET_USD);
    const id = await bob.conversation();
    const started = await bob.client.req('POST', `/v1/conversations/${id}/batches`, {
      prompts: ['one', 'two', 'three', 'four'],
      mode: 'sequential',
    });
    expect(started.status).toBe(202);

    const { endings } = await endedBatch(bob, id, started.body.batchId);

    expect(endings.map((e) => e.type)).toEqual(['AssistantReplied', 'TurnFailed', 'TurnFailed', 'TurnFailed']);
    for (const failed of endings.slice(1)) {
      expect(failed.data).toMatchObject({ code: 'budget_exceeded', retryable: false });
    }
    const spent = await waitFor('the ledger to hold the answer', async () => {
      const u = await usage(bob.client);
      return u.turns === 4 ? u : undefined;
    });
    expect(spent.costUsd).toBe(endings[0].data.costUsd);
  }, 90_000);

  it('holds an independent batch to the budget: at most the calls already in flight are bought', async () => {
    const concurrency = 16; // WORKER_CONCURRENCY's default: the turns that can be in flight at once
    const prompts = Array.from({ length: 30 }, (_, i) => `question ${i}`);
    const carol = readerWithBudget(BUDGET_USD);
    const id = await carol.conversation();
    const started = await carol.client.req('POST', `/v1/conversations/${id}/batches`, { prompts, mode: 'independent' });
    expect(started.status).toBe(202);

    const { endings } = await endedBatch(carol, id, started.body.batchId);

    const answered = endings.filter((e) => e.type === 'AssistantReplied');
    const refused = endings.filter((e) => e.type === 'TurnFailed' && e.data.code === 'budget_exceeded');
    expect(answered.length + refused.length).toBe(prompts.length);
    expect(answered.length).toBeGreaterThanOrEqual(1);
    expect(answered.length).toBeLessThanOrEqual(concurrency);
    const spent = await waitFor('the ledger to hold every ending', async () => {
      const u = await usage(carol.client);
      return u.turns === prompts.length ? u : undefined;
    });
    const oneAnswer = Math.max(...answered.map((e) => e.data.costUsd as number));
    expect(spent.costUsd).toBeLessThanOrEqual(concurrency * oneAnswer + 1e-6);
  }, 120_000);

  it('does not hand out a fresh budget when the reader erases their account (DELETE /v1/me)', async () => {
    const dave = readerWithBudget(BUDGET_USD);
    const id = await dave.conversation();
    const { ending } = await dave.ask(id, 'Who is Marisol?');
    expect(ending.type).toBe('AssistantReplied');
    const before = await waitFor('the answer in the ledger', async () => {
      const u = await usage(dave.client);
      return u.turns === 1 ? u : undefined;
    });
    expect(before.budget.leftUsd).toBe(0);

    expect((await dave.client.req('DELETE', '/v1/me')).status).toBeLessThan(300);

    const after = await usage(dave.client);
    expect(after.budget).toMatchObject({ spentUsd: before.budget.spentUsd, leftUsd: 0 });
    const fresh = await dave.conversation();
    const refused = await dave.client.req('POST', `/v1/conversations/${fresh}/messages`, { content: 'again?' });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'budget_exceeded', spentUsd: before.budget.spentUsd });
  }, 60_000);

  it('leaves an over-budget reader everything but posting', async () => {
    expect((await s.alice.req('GET', `/v1/conversations/${id}`)).status).toBe(200);
    expect((await s.alice.req('GET', `/v1/conversations/${id}/usage`)).status).toBe(200);
    expect((await s.alice.req('POST', '/v1/conversations', { bookId: s.bookId })).status).toBe(201);
  });
});
