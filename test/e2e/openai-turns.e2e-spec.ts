import path from 'node:path';
import { projectRoot } from '@parley/platform';
import { Envelope, expectEvent, expectOk, isEvent, turnOf } from '../support/api';
import {
  chatApiError,
  defaultChatReply,
  FakeChatReply,
  FakeOpenAi,
  lastUserText,
  RecordedChatRequest,
} from '../support/fake-openai/fake-openai.server';
import { openStream } from '../support/sse-client';
import { startProcess } from '../support/stack';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

const MODEL = 'acme-chat-1';
/** a self-hosted model without tool use, as Ollama serves one */
const NO_TOOLS = 'acme-local-gemma';
const PRICES = {
  [MODEL]: { provider: 'openai', input: 2, output: 8, cachedInput: 0.5 },
  // a self-hosted family, priced at 0 on purpose, by an explicit pattern
  'acme-local-*': { provider: 'openai', input: 0, output: 0 },
};

/** The fake model: searches with the question, answers from the tool's passages or the prompt's, citing [1]. */
function model(req: RecordedChatRequest): FakeChatReply {
  const messages: Array<{ role: string; content: unknown }> = req.body.messages;
  const asked = lastUserText(messages);
  const system = String(messages[0].content);
  if (system.startsWith('You write search queries'))
    return { text: /Last question: (.+)\s*$/.exec(asked)?.[1] ?? asked };
  if (!req.body.tools && asked.includes('[1]')) return { text: 'The book says Marisol carried a lamp. [1]' };
  if (asked.includes('SLOW')) return { text: 'word '.repeat(200), delayMsPerChunk: 40 };
  return defaultChatReply(req);
}

describe('agent turns over OpenAI (e2e, the openai SDK against the fake Chat Completions API)', () => {
  let openai: FakeOpenAi;
  beforeAll(async () => {
    openai = await FakeOpenAi.start({ defaultResponder: model, modelsWithoutTools: [NO_TOOLS] });
  });
  afterAll(() => openai.close());
  afterEach(() => {
    // only the tools refusal of the model without them: every other request was valid
    expect(openai.rejected.filter((r) => r.req.body?.model !== NO_TOOLS)).toEqual([]);
  });

  // two providers in one deployment: OpenAI by default, Claude (the fake Messages API) by policy
  const s = useReaderStack({
    env: () => ({
      LLM_PROVIDER: 'openai',
      LLM_PROVIDERS: 'openai,anthropic',
      OPENAI_API_KEY: 'sk-fake-openai',
      OPENAI_BASE_URL: openai.url,
      LLM_MODEL: MODEL,
      LLM_PRICES: JSON.stringify(PRICES),
      // readers may pick any priced model of either provider
      POLICY_MODELS: '*',
      AGENT_MAX_ITERATIONS: '3',
      LLM_MAX_RETRIES: '2',
    }),
  });
  const { conversation, events } = s;
  const post = async (id: string, content: string) =>
    expectOk(
      await s.alice.api.POST('/v1/conversations/{id}/messages', { params: { path: { id } }, body: { content } }),
      202,
    );
  const ending = (turnId: string) => (e: Envelope) =>
    ['AssistantReplied', 'TurnFailed', 'TurnCancelled'].includes(e.type) && turnOf(e) === turnId;
  const untilEnded = (id: string, turnId: string, ms = 20_000) =>
    waitFor(`turn ${turnId} to end`, async () => (await events(id)).find(ending(turnId)), ms);
  const usage = async (id: string) =>
    expectOk(await s.alice.api.GET('/v1/conversations/{id}/usage', { params: { path: { id } } }));
  const setModel = async (id: string, policyModel: string) =>
    s.alice.api.PATCH('/v1/conversations/{id}', { params: { path: { id } }, body: { policy: { model: policyModel } } });

  it('says in /readyz that the self-hosted model server (OPENAI_BASE_URL) answers', async () => {
    const ready = await fetch(`${s.stack.base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', redis: 'ok', model: 'ok' } });
  });

  it('runs a search turn: tool_calls answered by a tool message, AssistantReplied citing the passage, usage priced from LLM_PRICES', async () => {
    const id = await conversation();
    openai.enqueue(
      (req) => ({
        toolCalls: [{ name: 'search_book', arguments: { query: lastUserText(req.body.messages) } }],
        usage: { prompt_tokens: 1000, completion_tokens: 20, cached_tokens: 0 },
      }),
      {
        text: 'Marisol carried a lamp to the island. [1]',
        usage: { prompt_tokens: 1500, completion_tokens: 40, cached_tokens: 1024 },
      },
    );
    const { turnId } = await post(id, 'What did Marisol carry to the island?');
    const reply = expectEvent(await untilEnded(id, turnId), 'AssistantReplied');
    const log = (await events(id)).filter((e) => turnOf(e) === turnId);
    expect(log.map((e) => e.type)).toEqual([
      'UserMessagePosted',
      'ToolInvoked',
      'ToolResultRecorded',
      'AssistantReplied',
    ]);
    const invoked = expectEvent(log[1], 'ToolInvoked');
    const result = expectEvent(log[2], 'ToolResultRecorded');
    expect(invoked.data).toMatchObject({
      name: 'search_book',
      iteration: 1,
      toolUseId: expect.stringMatching(/^call_/),
    });
    expect(reply.data).toMatchObject({ model: MODEL, stopReason: 'end_turn', iterations: 2 });
    expect(reply.data.citations[0]).toMatchObject({ chunkId: result.data.chunks![0].chunkId });
    // the second request answered the tool call with a role "tool" message
    const [, second] = openai.requests.filter((r) => JSON.stringify(r.body).includes('What did Marisol carry'));
    const roles = second.body.messages.map((m: { role: string }) => m.role);
    expect(roles.slice(-2)).toEqual(['assistant', 'tool']);
    expect(second.body.messages.at(-1).tool_call_id).toBe(invoked.data.toolUseId);
    // the ledger: the provider's usage, cached tokens as cache reads, at the configured prices
    const figures = await waitFor('the turn in the usage report', async () => {
      const u = await usage(id);
      return u.turns === 1 ? u : undefined;
    });
    expect(figures).toMatchObject({ inputTokens: 1000 + 476, outputTokens: 60, cacheReadInputTokens: 1024 });
    expect(figures.costUsd).toBeCloseTo((1476 * 2 + 1024 * 0.5 + 60 * 8) / 1e6, 9);
  });

  it('streams text deltas on SSE', async () => {
    const id = await conversation();
    openai.enqueue({ text: 'The storm broke over the lamp room at dusk. '.repeat(4), delayMsPerChunk: 30 });
    const stream = openStream(`${s.stack.base}/v1/conversations/${id}/stream`, { token: s.alice.token });
    const { turnId } = await post(id, 'Tell me about the storm');
    await stream.until('AssistantReplied', (f) => f.some((x) => x.event === 'AssistantReplied'), 20_000);
    stream.close();
    const deltas = stream.frames.filter((f) => f.event === 'AssistantTextDelta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.data.turnId === turnId)).toBe(true);
    const replied = stream.frames.find((f) => f.event === 'AssistantReplied')!;
    expect(replied.data.data.content.startsWith(deltas.map((d) => d.data.text).join(''))).toBe(true);
  });

  it('cancels a turn mid-stream: the HTTP stream is aborted and the stopped call billed, as an estimate', async () => {
    const id = await conversation();
    const abortedBefore = openai.aborted;
    const { turnId } = await post(id, 'SLOW answer please');
    await waitFor('the slow stream to start', () =>
      openai.requests.some((r) => JSON.stringify(r.body).includes('SLOW')),
    );
    await new Promise((r) => setTimeout(r, 300));
    const cancelled = await s.alice.api.POST('/v1/conversations/{id}/turns/{turnId}/cancel', {
      params: { path: { id, turnId } },
    });
    expectOk(cancelled, 202);
    await waitFor('the fake to see the abort', () => openai.aborted > abortedBefore, 2_000);
    expect((await untilEnded(id, turnId)).type).toBe('TurnCancelled');
    const stopped = await waitFor('ModelCallStopped', async () => (await events(id)).find(isEvent('ModelCallStopped')));
    expect(stopped.data).toMatchObject({ turnId, model: MODEL, reason: 'cancelled', estimated: true });
    expect(stopped.data.usage.inputTokens).toBeGreaterThan(0);
    expect(stopped.data.costUsd).toBeGreaterThan(0);
    const billed = await waitFor('the stopped call in the usage report', async () => {
      const u = await usage(id);
      return u.costUsd > 0 ? u : undefined;
    });
    expect(billed.costUsd).toBeCloseTo(stopped.data.costUsd!, 9);
  });

  it('asks again when a stream breaks off once: the broken attempt recorded, the answer bought once', async () => {
    const id = await conversation();
    openai.enqueue({ text: 'word '.repeat(30), breakOff: { afterChunks: 3 } });
    const { turnId } = await post(id, 'What did the keeper write?');
    expectEvent(await untilEnded(id, turnId, 30_000), 'AssistantReplied');
    const log = (await events(id)).filter((e) => turnOf(e) === turnId);
    expect(log.map((e) => e.type)).toEqual([
      'UserMessagePosted',
      'ModelCallStopped',
      'ToolInvoked',
      'ToolResultRecorded',
      'AssistantReplied',
    ]);
    expect(log[1].data).toMatchObject({ iteration: 1, reason: 'broken' });
    expect(openai.requests.filter((r) => JSON.stringify(r.body).includes('What did the keeper write?'))).toHaveLength(
      3,
    );
  });

  it('waits out a 429 as Retry-After says, then answers', async () => {
    const id = await conversation();
    openai.enqueue(chatApiError(429, 'Rate limit reached for requests', 1));
    const before = openai.requests.length;
    const { turnId } = await post(id, 'After the rate limit, who arrived?');
    expectEvent(await untilEnded(id, turnId, 30_000), 'AssistantReplied');
    const [limited, retried] = openai.requests.slice(before);
    expect(retried.at - limited.at).toBeGreaterThanOrEqual(950);
  });

  it('answers a model without tool use by searching first, after one refused call, and never offers it tools again', async () => {
    const id = await conversation();
    expect((await setModel(id, NO_TOOLS)).response.status).toBe(200);
    // `auto` searches first once the model refuses tools (the stacks' default mode is `tools`, which fails instead)
    const auto = { policy: { retrievalMode: 'auto' as const } };
    const patched = await s.alice.api.PATCH('/v1/conversations/{id}', { params: { path: { id } }, body: auto });
    expect(patched.response.status).toBe(200);
    const first = await post(id, 'What did Marisol carry to the island?');
    const reply = expectEvent(await untilEnded(id, first.turnId), 'AssistantReplied');
    expect(reply.data.model).toBe(NO_TOOLS);
    expect(reply.data.citations.length).toBeGreaterThan(0);
    const refused = openai.rejected.filter((r) => r.req.body.model === NO_TOOLS);
    expect(refused).toHaveLength(1);
    expect(refused[0].message).toMatch(/does not support tools/);
    const second = await post(id, 'And who met her there?');
    expectEvent(await untilEnded(id, second.turnId), 'AssistantReplied');
    expect(openai.rejected.filter((r) => r.req.body.model === NO_TOOLS)).toHaveLength(1);
    expect(openai.requests.filter((r) => r.body.model === NO_TOOLS && r.body.tools)).toEqual([]);
    // recorded once for every worker
    const { rows } = await s.stack.db.pool.query('SELECT model FROM model_tool_refusals');
    expect(rows).toEqual([{ model: NO_TOOLS }]);
  });

  it('runs a conversation on Claude beside the OpenAI ones: the model table ties each model to its provider', async () => {
    const id = await conversation();
    expect((await setModel(id, 'claude-sonnet-5-5')).response.status).toBe(200);
    const anthropicBefore = s.fake.requests.length;
    const openaiBefore = openai.requests.length;
    const { turnId } = await post(id, 'What did Marisol carry, Claude?');
    const reply = expectEvent(await untilEnded(id, turnId), 'AssistantReplied');
    expect(reply.data.model).toBe('claude-sonnet-5-5');
    expect(s.fake.requests.length).toBeGreaterThan(anthropicBefore);
    expect(openai.requests.length).toBe(openaiBefore);
    expect(s.fake.rejected).toEqual([]);
  });

  it('refuses a policy.model that is not priced with 400, and takes one priced by a pattern', async () => {
    const id = await conversation();
    const unpriced = await setModel(id, 'gpt-7-turbo');
    expect(unpriced.response.status).toBe(400);
    expect(JSON.stringify(unpriced.error)).toMatch(/unknown model gpt-7-turbo/);
    expect((await setModel(id, 'acme-local-llama')).response.status).toBe(200);
  });

  // last: it kills the suite's worker
  it('finishes a turn whose worker was killed mid-call: the call is made again by the next worker, the answer recorded once', async () => {
    const id = await conversation();
    const asked = 'SLOW answer, then a crash';
    const { turnId } = await post(id, asked);
    const cut = await waitFor('the slow stream to start', () =>
      openai.requests.find((r) => lastUserText(r.body.messages) === asked),
    );
    const [victim] = s.stack.workers;
    victim.child.kill('SIGKILL');
    await waitFor(
      'the killed worker to exit',
      () => victim.child.exitCode !== null || victim.child.signalCode !== null,
    );
    await waitFor('the fake to see the stream cut', () => cut.aborted === true, 2_000);
    await s.stack.startWorker();
    const reply = expectEvent(await untilEnded(id, turnId, 40_000), 'AssistantReplied');
    expect(reply.data.model).toBe(MODEL);
    const log = (await events(id)).filter((e) => turnOf(e) === turnId);
    expect(log.filter((e) => e.type === 'AssistantReplied')).toHaveLength(1);
    // the cut call, then the one the next worker made: a killed worker records nothing, nothing else was bought
    expect(openai.requests.filter((r) => lastUserText(r.body.messages) === asked)).toHaveLength(2);
  }, 60_000);
});

describe('start-up refusals of the price table (e2e, the built processes)', () => {
  const exitOf = async (script: string, env: Record<string, string>) => {
    const proc = startProcess('refused', [path.join(projectRoot(), script)], {
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: 'x'.repeat(32),
      ...env,
    });
    await waitFor(`${script} to exit`, () => proc.child.exitCode !== null, 15_000);
    return { code: proc.child.exitCode, output: proc.output() };
  };

  it.each(['dist/apps/api/src/main.js', 'dist/apps/worker/src/main.js'])(
    '%s stops on a malformed LLM_PRICES, and on an LLM_MODEL it has no price for',
    async (script) => {
      const openaiEnv = { LLM_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-x' };
      const malformed = await exitOf(script, { ...openaiEnv, LLM_PRICES: '{"acme": {"provider": "openai"}}' });
      expect(malformed.code).toBe(1);
      expect(malformed.output).toMatch(/LLM_PRICES\.acme\.input/);
      const unpriced = await exitOf(script, { ...openaiEnv, LLM_MODEL: 'acme-chat-1' });
      expect(unpriced.code).toBe(1);
      expect(unpriced.output).toMatch(/LLM_MODEL: unknown model acme-chat-1/);
    },
    40_000,
  );
});
