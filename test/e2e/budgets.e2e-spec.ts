import { randomUUID } from 'node:crypto';
import { TURN_ENDING_TYPES } from '@parley/conversation';
import { expectOk, expectProblem, turnOf } from '../support/api';
import { questionOf } from '../support/fake-anthropic/questions';
import { waitForBook } from '../support/factories/books';
import { clientFor, Client } from '../support/stack';
import { conversationHelpers } from '../support/conversation-helpers';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

const MODEL = 'claude-sonnet-5-5';
/** The suite's price (LLM_PRICES, USD per million tokens): output so dear that max_tokens of it is most of a call's worst case. */
const PRICE = { provider: 'anthropic', input: 1, output: 1000 };
/** LLM_MAX_TOKENS: a call's worst case is 32 output tokens ($0.032) plus its prompt at the cache-write price. */
const MAX_TOKENS = 32;
const OUTPUT_WORST_USD = (MAX_TOKENS * PRICE.output) / 1e6;
/**
 * Holds one call's worst case (its prompt of a thousand-odd tokens adds about $0.002), not that
 * and a second beside what the first spent: the fake's answer to a long question is ~22 tokens.
 */
const BUDGET_USD = 0.04;
/**
 * What a call may cost beyond the worst case reserved for it, should the estimate of its prompt
 * be low: bounded here by a prompt of 4,000 tokens at the cache-write price (1.25× input).
 */
const ESTIMATION_ERROR_USD = (4_000 * PRICE.input * 1.25) / 1e6;

/** A question the fake answers at length (it repeats up to 80 characters of it): an answer spends ~$0.022. */
const long = (q: string) => `${q} Tell me about the lamp room, the keeper and the storm that night at the lighthouse.`;

/**
 * BUDGET_USD_PER_MONTH and the token's parley_budget_usd_per_month: posts refused once a month's
 * spend reaches them, and each model call made only when its worst case fits what is left.
 */
describe('reader budgets (e2e, real SDK against the fake Messages API)', () => {
  const s = useReaderStack({
    env: {
      LLM_MODEL: MODEL,
      LLM_PRICES: JSON.stringify({ [MODEL]: PRICE }),
      LLM_MAX_TOKENS: String(MAX_TOKENS),
      BUDGET_USD_PER_MONTH: String(BUDGET_USD),
    },
  });
  const { events } = s;
  const usage = async (who: Client) => expectOk(await who.api.GET('/v1/usage'));
  const versionOf = async (id: string) => (await s.alice.req('GET', `/v1/conversations/${id}`)).body.version as number;
  const turnEnded = (id: string, turnId: string) =>
    waitFor(`turn ${turnId} to end`, async () =>
      (await events(id)).find((e) => turnOf(e) === turnId && TURN_ENDING_TYPES.includes(e.type)),
    );
  const monthStart = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)).toISOString();
  const nextMonthStart = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();
  /** The fake's requests asking `question` (the model calls made for it). */
  const callsFor = (question: string) => s.fake.requests.filter((r) => questionOf(r) === question).length;

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
    // no book: the turn is one model call, whose worst case fits the budget
    id = expectOk(await s.alice.api.POST('/v1/conversations', { body: {} }), 201).id;
    const posted = await s.alice.req(
      'POST',
      `/v1/conversations/${id}/messages`,
      { content: long('Who is Marisol?') },
      { 'Idempotency-Key': firstKey },
    );
    expect(posted.status).toBe(202);
    firstAnswer = posted.body;
    expect(await turnEnded(id, firstAnswer.turnId)).toMatchObject({ type: 'AssistantReplied' });
  }, 60_000);

  it('makes no model call whose worst case does not fit what is left: the turn fails budget_exceeded', async () => {
    const spent = await waitFor('the answer to reach the ledger', async () => {
      const u = await usage(s.alice);
      return u.turns === 1 ? u : undefined;
    });
    // what is left is less than a call's worst case, though the month is not spent: the post is let in
    expect(spent.budget.spentUsd).toBeLessThan(BUDGET_USD);
    expect(spent.budget.leftUsd).toBeLessThan(OUTPUT_WORST_USD);
    const question = long('And the lamp room?');
    const posted = expectOk(
      await s.alice.api.POST('/v1/conversations/{id}/messages', {
        params: { path: { id } },
        body: { content: question },
      }),
      202,
    );
    const ending = await turnEnded(id, posted.turnId);
    expect(ending).toMatchObject({ type: 'TurnFailed', data: { code: 'budget_exceeded', retryable: false } });
    expect(ending.data.message).toMatch(/may cost up to \$[\d.]+, more than is left/);
    expect(callsFor(question)).toBe(0);
    const after = await waitFor('the failure to reach the ledger', async () => {
      const u = await usage(s.alice);
      return u.turns === 2 ? u : undefined;
    });
    expect(after.budget.spentUsd).toBe(spent.budget.spentUsd);

    // a richer token of the same reader spends past the server's budget (the same ledger)
    const richer = clientFor(s.stack.base, s.alice.userId, { claims: { parley_budget_usd_per_month: 1000 } });
    const more = expectOk(
      await richer.api.POST('/v1/conversations/{id}/messages', {
        params: { path: { id } },
        body: { content: long('What did the keeper see?') },
      }),
      202,
    );
    expect(await turnEnded(id, more.turnId)).toMatchObject({ type: 'AssistantReplied' });
  }, 60_000);

  it('refuses a post and a batch with 402 budget_exceeded once the month is spent, appending nothing', async () => {
    // the usage ledger follows the log a moment behind: wait for the second answer's line
    const spent = await waitFor('the answers to reach the ledger', async () => {
      const u = await usage(s.alice);
      return u.turns === 3 ? u : undefined;
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
      { content: long('Who is Marisol?') },
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
    // a fresh reader may start a batch (nothing spent); after its first answer no call's worst case fits
    const bob = readerWithBudget(BUDGET_USD);
    const id = await bob.conversation();
    const started = await bob.client.req('POST', `/v1/conversations/${id}/batches`, {
      prompts: ['one', 'two', 'three', 'four'].map(long),
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

  it('holds an independent batch and posts in several conversations at once to the budget: worst cases reserved, nothing bought past it', async () => {
    // room for three calls' worst cases at once, and less once answers are paid for
    const budgetUsd = 3 * BUDGET_USD;
    const carol = readerWithBudget(budgetUsd);
    const prompts = Array.from({ length: 20 }, (_, i) => long(`Question ${i} of the batch.`));
    const ids = [await carol.conversation()];
    for (let i = 0; i < 5; i++) ids.push(await carol.conversation());
    const posts = ids.slice(1).map((_, i) => long(`Question ${i} of a conversation.`));
    const [started, ...posted] = await Promise.all([
      carol.client.req('POST', `/v1/conversations/${ids[0]}/batches`, { prompts, mode: 'independent' }),
      ...ids
        .slice(1)
        .map((id, i) => carol.client.req('POST', `/v1/conversations/${id}/messages`, { content: posts[i] })),
    ]);
    expect(started.status).toBe(202);
    expect(posted.map((p) => p.status)).toEqual(posts.map(() => 202));

    const { endings: batchEndings } = await endedBatch(carol, ids[0], started.body.batchId);
    const postEndings = [];
    for (const [i, p] of posted.entries()) {
      postEndings.push(
        await waitFor(`turn ${p.body.turnId} to end`, async () =>
          (await carol.events(ids[i + 1])).find(
            (e) => turnOf(e) === p.body.turnId && TURN_ENDING_TYPES.includes(e.type),
          ),
        ),
      );
    }
    const questions = [...prompts, ...posts];
    const endings = [...batchEndings, ...postEndings];
    const answered = questions.filter((_, i) => endings[i].type === 'AssistantReplied');
    const refused = questions.filter(
      (_, i) => endings[i].type === 'TurnFailed' && endings[i].data.code === 'budget_exceeded',
    );
    expect(answered.length + refused.length).toBe(questions.length);
    expect(answered.length).toBeGreaterThanOrEqual(1);
    // each answer spends ~$0.024 of the $0.12: at most four calls' worst cases ever fit
    expect(answered.length).toBeLessThanOrEqual(4);
    // a refused turn bought nothing; an answered one its one call
    for (const q of refused) expect({ q, calls: callsFor(q) }).toEqual({ q, calls: 0 });
    for (const q of answered) expect({ q, calls: callsFor(q) }).toEqual({ q, calls: 1 });

    const spent = await waitFor('the ledger to hold every ending', async () => {
      const u = await usage(carol.client);
      return u.turns === questions.length ? u : undefined;
    });
    expect(spent.costUsd).toBeGreaterThan(0);
    expect(spent.costUsd).toBeLessThanOrEqual(budgetUsd + ESTIMATION_ERROR_USD);
    expect(spent.budget.spentUsd).toBe(spent.costUsd);
  }, 120_000);

  it('buys nothing for a budget below any call: a 20-prompt batch at $0.0001 spends $0 and calls the model 0 times', async () => {
    const mallory = readerWithBudget(0.0001);
    const id = await mallory.conversation();
    const prompts = Array.from({ length: 20 }, (_, i) => long(`Attack ${i}.`));
    const started = await mallory.client.req('POST', `/v1/conversations/${id}/batches`, {
      prompts,
      mode: 'independent',
    });
    expect(started.status).toBe(202);
    const { endings } = await endedBatch(mallory, id, started.body.batchId);
    expect(endings.map((e) => [e.type, e.data.code])).toEqual(prompts.map(() => ['TurnFailed', 'budget_exceeded']));
    expect(prompts.map(callsFor)).toEqual(prompts.map(() => 0));
    const spent = await waitFor('the ledger to hold every ending', async () => {
      const u = await usage(mallory.client);
      return u.turns === prompts.length ? u : undefined;
    });
    expect(spent.costUsd).toBe(0);
  }, 120_000);

  it('reserves a whole-book call with its documents: a book the budget cannot pay for is not sent', async () => {
    // ~72,000 characters: ~18,000 tokens as the fake counts them, ~$0.0225 written to the cache;
    // the answer's worst case is $0.032 besides. Erin's $0.045 holds a plain call, not this one.
    const erin = readerWithBudget(0.045);
    const chapters = Array.from({ length: 12 }, (_, c) => [
      `## Chapter ${c + 1}`,
      '',
      'The tide went out and came back, and the keeper wrote the weather in the log. '.repeat(75),
      '',
    ]);
    const content = ['# The Long Sea', '', ...chapters.flat()].join('\n');
    const upload = expectOk(
      await erin.client.api.POST('/v1/books', { body: { title: 'The Long Sea', format: 'markdown', content } }),
      202,
    );
    const book = await waitForBook(erin.client, upload.id, 60_000);
    const id = expectOk(await erin.client.api.POST('/v1/conversations', { body: { bookId: book.id } }), 201).id;
    const patched = await erin.client.req('PATCH', `/v1/conversations/${id}`, {
      policy: { retrievalMode: 'whole-book' },
    });
    expect(patched.status).toBe(200);

    const calls = s.fake.requests.length;
    const question = long('What did the keeper write?');
    const { ending } = await erin.ask(id, question);
    expect(ending).toMatchObject({ type: 'TurnFailed', data: { code: 'budget_exceeded' } });
    expect(s.fake.requests.length).toBe(calls);

    // the same budget pays for a call without the book
    const plain = await erin.conversation();
    expect((await erin.ask(plain, question)).ending.type).toBe('AssistantReplied');
    expect(callsFor(question)).toBe(1);
  }, 120_000);

  it('does not hand out a fresh budget when the reader erases their account (DELETE /v1/me)', async () => {
    // a budget of one call's worst case: after one answer, what is left pays for no other call
    const dave = readerWithBudget(BUDGET_USD);
    const id = await dave.conversation();
    const { ending } = await dave.ask(id, long('Who is Marisol?'));
    expect(ending.type).toBe('AssistantReplied');
    const before = await waitFor('the answer in the ledger', async () => {
      const u = await usage(dave.client);
      return u.turns === 1 ? u : undefined;
    });
    expect(before.budget.spentUsd).toBeGreaterThan(0);

    expect((await dave.client.req('DELETE', '/v1/me')).status).toBeLessThan(300);

    const after = await usage(dave.client);
    expect(after.budget).toMatchObject({ spentUsd: before.budget.spentUsd, leftUsd: before.budget.leftUsd });
    const fresh = await dave.conversation();
    const again = long('Again?');
    const { ending: refused } = await dave.ask(fresh, again);
    expect(refused).toMatchObject({ type: 'TurnFailed', data: { code: 'budget_exceeded' } });
    expect(callsFor(again)).toBe(0);
  }, 60_000);

  it('leaves an over-budget reader everything but posting', async () => {
    expect((await s.alice.req('GET', `/v1/conversations/${id}`)).status).toBe(200);
    expect((await s.alice.req('GET', `/v1/conversations/${id}/usage`)).status).toBe(200);
    expect((await s.alice.req('POST', '/v1/conversations', { bookId: s.bookId })).status).toBe(201);
  });
});
