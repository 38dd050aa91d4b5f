import { randomUUID } from 'node:crypto';
import { expectOk } from '../support/api';
import { conversationHelpers } from '../support/conversation-helpers';
import { Client, clientFor } from '../support/stack';
import { useFakeStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

const MODEL = 'claude-sonnet-5-5';
/** Prices (LLM_PRICES, USD per million tokens) that make every answer cost something. */
const PRICE = { provider: 'anthropic', input: 1, output: 1000 };
/** LLM_MAX_TOKENS: a call's worst case is about $0.034 (32 output tokens and its prompt). */
const MAX_TOKENS = 32;
const FIGURES = [
  'turns',
  'toolCalls',
  'failures',
  'inputTokens',
  'outputTokens',
  'cacheReadInputTokens',
  'cacheCreationInputTokens',
] as const;

/**
 * A tenant's admin (`parley_roles: ["admin"]`, their `parley_tenant`): the tenant's usage adds up
 * to its readers' own, and the budgets they set hold at the door and before each model call.
 */
describe('tenant administration (e2e)', () => {
  const s = useFakeStack({
    env: { LLM_MODEL: MODEL, LLM_PRICES: JSON.stringify({ [MODEL]: PRICE }), LLM_MAX_TOKENS: String(MAX_TOKENS) },
  });
  const tenant = `tenant-${randomUUID()}`;
  const as = (userId: string, claims: Record<string, unknown> = {}) => clientFor(s.stack.base, userId, { claims });
  let ann: Client;
  let bob: Client;
  let admin: Client;
  let otherAdmin: Client;

  beforeAll(() => {
    // ann's token gives her a generous budget of her own: her admin's, once set, holds over it
    ann = as(`ann-${randomUUID()}`, { parley_tenant: tenant, parley_budget_usd_per_month: 1000 });
    bob = as(`bob-${randomUUID()}`, { parley_tenant: tenant });
    admin = as(`admin-${randomUUID()}`, { parley_tenant: tenant, parley_roles: ['admin'] });
    otherAdmin = as(`admin-${randomUUID()}`, { parley_tenant: `${tenant}-other`, parley_roles: ['admin'] });
  });

  const usage = async (who: Client) => expectOk(await who.api.GET('/v1/usage'));
  /** Asks a question in a new conversation of `who`'s and waits for its turn's line in their usage. */
  const askAndBill = async (who: Client, question: string) => {
    const { conversation, ask } = conversationHelpers(() => who);
    const turnsBefore = (await usage(who)).turns;
    const { ending } = await ask(await conversation(), question);
    await waitFor(
      `${who.userId}'s turn in the ledger`,
      async () => (await usage(who)).turns > turnsBefore || undefined,
    );
    return ending;
  };
  const post = async (who: Client) => {
    const id = expectOk(await who.api.POST('/v1/conversations', { body: {} }), 201).id;
    return who.req('POST', `/v1/conversations/${id}/messages`, { content: 'Who keeps the lighthouse?' });
  };

  it("adds up to the readers' own usage, by reader, by model and by day, in JSON and CSV", async () => {
    expect(await askAndBill(ann, 'Who is Marisol?')).toMatchObject({ type: 'AssistantReplied' });
    expect(await askAndBill(ann, 'And the keeper?')).toMatchObject({ type: 'AssistantReplied' });
    expect(await askAndBill(bob, 'What of the storm?')).toMatchObject({ type: 'AssistantReplied' });
    const [own, bobs] = [await usage(ann), await usage(bob)];
    expect(own.costUsd).toBeGreaterThan(0);

    const byReader = await admin.req('GET', '/v1/tenant/usage?groupBy=reader');
    expect(byReader.status).toBe(200);
    expect(byReader.body.tenant).toBe(tenant);
    const groups = Object.fromEntries(byReader.body.groups.map((g: { key: string }) => [g.key, g]));
    expect(Object.keys(groups).sort()).toEqual([ann.userId, bob.userId].sort());
    const { budget: _a, ...annUsage } = own;
    const { budget: _b, ...bobUsage } = bobs;
    expect(groups[ann.userId]).toEqual({ key: ann.userId, ...annUsage });
    expect(groups[bob.userId]).toEqual({ key: bob.userId, ...bobUsage });

    const byModel = await admin.req('GET', '/v1/tenant/usage?groupBy=model');
    expect(byModel.body.groups.map((g: { key: string }) => g.key)).toEqual([MODEL]);
    const [model] = byModel.body.groups;
    for (const f of FIGURES) expect(model[f]).toBe(own.byModel[MODEL][f] + bobs.byModel[MODEL][f]);
    expect(model.costUsd).toBeCloseTo(own.costUsd + bobs.costUsd, 6);
    expect(byModel.body.total.turns).toBe(own.turns + bobs.turns);

    const today = new Date().toISOString().slice(0, 10);
    const byDay = await admin.req('GET', `/v1/tenant/usage?groupBy=day&from=${today}T00:00:00Z`);
    expect(byDay.body.groups).toMatchObject([{ key: today, turns: 3 }]);
    expect(byDay.body.groups[0].costUsd).toBeCloseTo(own.costUsd + bobs.costUsd, 6);

    const csv = await admin.req('GET', '/v1/tenant/usage?groupBy=reader', undefined, { accept: 'text/csv' });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const [header, ...lines] = csv.text.trim().split('\r\n');
    expect(header).toBe(
      'reader,turns,toolCalls,failures,inputTokens,outputTokens,cacheReadInputTokens,cacheCreationInputTokens,costUsd,cacheHitRate',
    );
    const annLine = lines.find((l) => l.startsWith(`${ann.userId},`))!.split(',');
    expect(Number(annLine[1])).toBe(own.turns);
    expect(Number(annLine[8])).toBe(own.costUsd);
    expect(lines).toHaveLength(2);
  }, 120_000);

  it("refuses readers (403), a tenant-less admin (403), and another tenant's admin sees none of it", async () => {
    expect((await bob.req('GET', '/v1/tenant/usage')).body).toMatchObject({ code: 'forbidden' });
    expect((await bob.req('PUT', '/v1/tenant/budget', { monthlyUsd: 5 })).status).toBe(403);
    const tenantless = as(`admin-${randomUUID()}`, { parley_roles: ['admin'] });
    expect((await tenantless.req('GET', '/v1/tenant/budget')).status).toBe(403);

    const theirs = await otherAdmin.req('GET', '/v1/tenant/usage');
    expect(theirs.body).toMatchObject({ tenant: `${tenant}-other`, groups: [], total: { turns: 0, costUsd: 0 } });
    const foreign = await otherAdmin.req('PUT', `/v1/tenant/readers/${ann.userId}/budget`, { monthlyUsd: 0 });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ code: 'reader_not_found' });
    expect((await otherAdmin.req('GET', `/v1/tenant/readers/${ann.userId}/budget`)).status).toBe(404);
    expect((await admin.req('PUT', '/v1/tenant/budget', { monthlyUsd: -1 })).status).toBe(400);
    expect((await admin.req('PUT', '/v1/tenant/budget', {})).status).toBe(400);
  }, 60_000);

  it("stops one reader with the budget their admin set, over their token's; null lifts it", async () => {
    const spent = (await usage(ann)).budget.spentUsd;
    const set = await admin.req('PUT', `/v1/tenant/readers/${ann.userId}/budget`, { monthlyUsd: spent });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ userId: ann.userId, tenant, monthlyUsd: spent, spentUsd: spent, leftUsd: 0 });
    expect((await usage(ann)).budget).toMatchObject({ limitUsd: spent, leftUsd: 0 });

    const refused = await post(ann);
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'budget_exceeded', budgetUsd: spent });
    expect((await post(bob)).status).toBe(202); // bob is not held by ann's budget

    expect(
      (await admin.req('PUT', `/v1/tenant/readers/${ann.userId}/budget`, { monthlyUsd: null })).body,
    ).toMatchObject({ monthlyUsd: null, leftUsd: null });
    expect((await post(ann)).status).toBe(202);
  }, 60_000);

  it("stops both readers together once the tenant's cap is spent, at the door and before each model call", async () => {
    const tenantSpent = async () => (await admin.req('GET', '/v1/tenant/budget')).body.spentUsd as number;
    // the posts above are answered: wait for their lines, so the cap is set at the month's whole spend
    await waitFor('the posts above in the ledger', async () => ((await usage(ann)).turns === 3 ? true : undefined));
    await waitFor('bob\u2019s second turn in the ledger', async () =>
      (await usage(bob)).turns === 2 ? true : undefined,
    );
    const spent = await tenantSpent();

    // a cap with less room than a call's worst case: posts are let in, their model calls are not made
    const room = 0.001;
    expect((await admin.req('PUT', '/v1/tenant/budget', { monthlyUsd: spent + room })).body).toMatchObject({
      tenant,
      monthlyUsd: spent + room,
      spentUsd: spent,
    });
    const calls = s.fake.requests.length;
    const { conversation, ask } = conversationHelpers(() => bob);
    const { ending } = await ask(await conversation(), 'And the lamp room?');
    expect(ending).toMatchObject({ type: 'TurnFailed', data: { code: 'budget_exceeded' } });
    expect(ending.data.message).toMatch(/tenant/);
    expect(s.fake.requests.length).toBe(calls);

    // a cap already spent: both readers' posts are refused at the door
    await admin.req('PUT', '/v1/tenant/budget', { monthlyUsd: spent });
    for (const who of [ann, bob]) {
      const refused = await post(who);
      expect(refused.status).toBe(402);
      expect(refused.body).toMatchObject({ code: 'budget_exceeded', tenant, budgetUsd: spent });
    }
    // lifting it lets them in again
    expect((await admin.req('PUT', '/v1/tenant/budget', { monthlyUsd: null })).body).toMatchObject({
      monthlyUsd: null,
    });
    expect((await post(ann)).status).toBe(202);
  }, 120_000);
});
