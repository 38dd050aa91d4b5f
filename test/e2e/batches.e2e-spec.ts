import { randomUUID } from 'node:crypto';
import { priceTableWith } from '@parley/agent';
import { turnOf } from '../support/api';
import { defaultReply } from '../support/fake-anthropic/default-responder';
import { FakeReply } from '../support/fake-anthropic/fake-anthropic.server';
import { clientFor } from '../support/stack';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

/** The shipped prices (no LLM_PRICES here). */
const { costUsd } = priceTableWith();

const ENDINGS = ['AssistantReplied', 'TurnFailed', 'TurnCancelled'];

/** POST …/batches: prompts answered in order (sequential) or each against the same history (independent). */
describe('batches of prompts (e2e, real SDK against the fake Messages API)', () => {
  let slow = false;
  const s = useReaderStack({
    fake: {
      defaultResponder: (req): FakeReply => ({ ...defaultReply(req), ...(slow ? { delayMsPerChunk: 150 } : {}) }),
      holdBatches: true, // a Message Batch ends when the test says (endBatches)
    },
    workers: 2,
    env: { LLM_BATCH_POLL_MS: '300' },
  });
  const { conversation, events, ask } = s;
  const startBatch = (id: string, body: object) => s.alice.req('POST', `/v1/conversations/${id}/batches`, body);
  const batchOf = async (id: string, batchId: string) =>
    (await s.alice.req('GET', `/v1/conversations/${id}/batches/${batchId}`)).body;
  const completed = (id: string, batchId: string) =>
    waitFor(
      `batch ${batchId} completed`,
      async () =>
        (await events(id)).find(
          (e) => e.type === 'BatchCompleted' && (e.data as { batchId: string }).batchId === batchId,
        ),
      60_000,
    );
  it('sequential: the prompts are the next turns, in order, each seeing the answers before it', async () => {
    const id = await conversation();
    const prompts = ['SEQ one: who is Marisol?', 'SEQ two: what did she find?', 'SEQ three: and the ship?'];
    const r = await startBatch(id, { prompts, mode: 'sequential' });
    expect(r.status).toBe(202);
    const { batchId } = r.body;
    await completed(id, batchId);
    const log = await events(id);
    const started = log.find((e) => e.type === 'BatchStarted')!;
    const posted = log.filter((e) => e.type === 'UserMessagePosted');
    expect(posted.map((e) => (e.data as { content: string }).content)).toEqual(prompts);
    expect(posted[0].version).toBe(started.version + 1);
    expect(log.filter((e) => e.type === 'BatchCompleted')).toHaveLength(1);
    // the third prompt's first request carries the first two answers
    const third = s.fake.requests.find((q) => JSON.stringify(q.body.messages.at(-1)).includes('SEQ three'))!;
    expect(third.body.messages.filter((m: { role: string }) => m.role === 'assistant').length).toBeGreaterThanOrEqual(
      4,
    );
    const batch = await batchOf(id, batchId);
    expect(batch).toMatchObject({ batchId, mode: 'sequential', status: 'completed' });
    expect(batch.items.map((i: { prompt: string; status: string }) => [i.prompt, i.status])).toEqual(
      prompts.map((p) => [p, 'replied']),
    );
    for (const item of batch.items) {
      expect(item.conversationId).toBe(id);
      expect(item.answer).toContain('Answer');
      expect(item.latencyMs).toBeGreaterThan(0);
    }
    const sumOf = (k: string) =>
      batch.items.reduce((n: number, i: { usage: Record<string, number> }) => n + i.usage[k], 0);
    expect(batch.metrics).toMatchObject({
      turns: 3,
      failures: 0,
      inputTokens: sumOf('inputTokens'),
      outputTokens: sumOf('outputTokens'),
    });
    expect(batch.metrics.latencyMsP50).toBeLessThanOrEqual(batch.metrics.latencyMsP95);
  }, 90_000);

  it('independent: each prompt is answered in a fork against the same history, and this history stays as it was', async () => {
    const id = await conversation();
    await ask(id, 'IND base: who keeps the lighthouse?');
    const before = await events(id);
    const prompts = ['IND alpha: the telescope?', 'IND beta: the logbook?', 'IND gamma: the storm?'];
    const { batchId } = (await startBatch(id, { prompts, mode: 'independent' })).body;
    await completed(id, batchId);
    const after = await events(id);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length).map((e) => e.type)).toEqual(['BatchStarted', 'BatchCompleted']);
    const batch = await batchOf(id, batchId);
    expect(batch.status).toBe('completed');
    const forks = new Set(batch.items.map((i: { conversationId: string }) => i.conversationId));
    expect(forks.size).toBe(3);
    expect(forks.has(id)).toBe(false);
    for (const p of prompts) {
      const first = s.fake.requests.find((q) => JSON.stringify(q.body.messages.at(-1)).includes(p))!;
      const sent = JSON.stringify(first.body.messages);
      expect(sent).toContain('IND base: who keeps the lighthouse?'); // the shared history
      for (const other of prompts.filter((o) => o !== p)) expect(sent).not.toContain(other);
    }
  }, 90_000);

  it('completes a batch exactly once when a worker is killed mid-batch', async () => {
    const id = await conversation();
    slow = true;
    try {
      const prompts = Array.from({ length: 6 }, (_, i) => `KILL ${i}: the lamp?`);
      const { batchId } = (await startBatch(id, { prompts, mode: 'independent' })).body;
      await waitFor(
        'a model call in flight',
        async () => s.fake.requests.some((q) => JSON.stringify(q.body).includes('KILL')) || undefined,
      );
      await s.stack.workers[0].kill('SIGKILL');
      await completed(id, batchId);
      const batch = await batchOf(id, batchId);
      expect(batch.items.every((i: { status: string }) => i.status !== 'pending')).toBe(true);
      for (const item of batch.items) {
        const endings = (await events(item.conversationId)).filter(
          (e) => turnOf(e) === item.turnId && ENDINGS.includes(e.type),
        );
        expect(endings).toHaveLength(1);
      }
      expect((await events(id)).filter((e) => e.type === 'BatchCompleted')).toHaveLength(1);
    } finally {
      slow = false;
      await s.stack.startWorker();
    }
  }, 120_000);

  it('via message-batches: each answering call goes through the Message Batches API, is bought once across a restart of every worker, and costs half', async () => {
    const id = await conversation();
    await ask(id, 'MB base: who keeps the lighthouse?');
    const prompts = ['MB alpha: the telescope?', 'MB beta: the logbook?', 'MB gamma: the storm?'];
    const r = await startBatch(id, { prompts, mode: 'independent', via: 'message-batches' });
    expect(r.status).toBe(202);
    const { batchId } = r.body;
    const submittedIn = async (conversationId: string) =>
      (await events(conversationId)).filter((e) => e.type === 'ModelBatchSubmitted');
    // each prompt's first call is in a provider batch, and its turn waits without a worker slot
    await waitFor('three provider batches', async () => s.fake.batches.length >= 3 || undefined, 30_000);
    const running = await batchOf(id, batchId);
    expect(running).toMatchObject({ via: 'message-batches', status: 'running' });
    for (const item of running.items)
      await waitFor(`ModelBatchSubmitted in ${item.conversationId}`, async () =>
        (await submittedIn(item.conversationId)).length === 1 ? true : undefined,
      );
    const other = await conversation();
    expect((await ask(other, 'MB meanwhile: who is Marisol?')).ending.type).toBe('AssistantReplied');

    // a deploy while the batches are out: every worker goes, new ones come
    await Promise.all(s.stack.workers.map((w) => w.kill('SIGKILL')));
    const ended = setInterval(() => s.fake.endBatches(), 200); // the provider ends each batch it gets
    try {
      await s.stack.startWorker();
      await completed(id, batchId);
    } finally {
      clearInterval(ended);
    }
    const batch = await batchOf(id, batchId);
    expect(batch).toMatchObject({ via: 'message-batches', status: 'completed', metrics: { failures: 0 } });
    for (const item of batch.items) {
      expect(item.status).toBe('replied');
      expect(item.answer).toContain('Answer');
      const replied = (await events(item.conversationId)).find(
        (e) => e.type === 'AssistantReplied' && turnOf(e) === item.turnId,
      )!.data as {
        model: string;
        usage: Parameters<typeof costUsd>[1];
        costUsd: number;
      };
      expect(replied.costUsd).toBe(costUsd(replied.model, replied.usage, { batched: true }));
      expect(replied.costUsd).toBeLessThan(costUsd(replied.model, replied.usage));
      // its tool call says the call that asked for it was batched (the usage read model prices it so)
      const invoked = (await events(item.conversationId)).filter(
        (e) => e.type === 'ToolInvoked' && turnOf(e) === item.turnId,
      );
      expect(invoked.map((e) => (e.data as { batched?: boolean }).batched)).toEqual([true]);
      // the tool call, then the answer: two calls, each submitted once, for steps of their own
      const submitted = await submittedIn(item.conversationId);
      expect(submitted.map((e) => (e.data as { step: string }).step)).toEqual([
        `${item.turnId}/reply/1`,
        `${item.turnId}/reply/2`,
      ]);
    }
    // bought once: 2 calls per prompt, no batch made again, no call of theirs on the streaming API
    expect(s.fake.batches).toHaveLength(6);
    for (const p of prompts) {
      const calls = s.fake.requests.filter((q) => JSON.stringify(q.body.messages.at(-1)).includes(p));
      expect(calls.length).toBeGreaterThan(0);
      expect(calls.every((q) => q.batchId !== undefined)).toBe(true);
    }
    expect((await startBatch(id, { prompts: ['MB seq?'], mode: 'sequential', via: 'message-batches' })).status).toBe(
      400,
    );
  }, 120_000);

  it('refuses an empty, oversized or malformed batch with a 400, and an unknown conversation or batch with a 404', async () => {
    const id = await conversation();
    const version = (await s.alice.req('GET', `/v1/conversations/${id}`)).body.version;
    const bad: object[] = [
      { prompts: [], mode: 'sequential' },
      { prompts: Array.from({ length: 51 }, () => 'q'), mode: 'sequential' },
      { prompts: ['  '], mode: 'independent' },
      { prompts: ['x'.repeat(16_001)], mode: 'sequential' },
      { prompts: ['ok'], mode: 'parallel' },
      { prompts: 'ok', mode: 'sequential' },
      { prompts: [42], mode: 'sequential' },
      { prompts: ['ok'] },
      { prompts: ['ok'], mode: 'independent', via: 'carrier-pigeon' },
      { prompts: ['ok'], mode: 'sequential', via: 'message-batches' },
    ];
    for (const body of bad)
      expect({ body, status: (await startBatch(id, body)).status }).toEqual({ body, status: 400 });
    expect((await s.alice.req('GET', `/v1/conversations/${id}`)).body.version).toBe(version);
    expect((await startBatch(randomUUID(), { prompts: ['q'], mode: 'sequential' })).status).toBe(404);
    const bob = clientFor(s.stack.base, `reader-${randomUUID()}`);
    expect(
      (await bob.req('POST', `/v1/conversations/${id}/batches`, { prompts: ['q'], mode: 'sequential' })).status,
    ).toBe(404);
    expect((await s.alice.req('GET', `/v1/conversations/${id}/batches/${randomUUID()}`)).status).toBe(404);
    expect((await s.alice.req('GET', `/v1/conversations/${id}/batches/nope`)).status).toBe(400);
  }, 60_000);
});
