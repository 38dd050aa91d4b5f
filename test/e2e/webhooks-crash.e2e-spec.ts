/**
 * Webhooks are at least once across crashes (docs/webhooks.md): turns run while the worker (which
 * writes the outbox from the log and sends it) and the API are killed with SIGKILL, mid-turn and
 * mid-delivery, and started again; in the end the receiver has verified a delivery of every
 * turn's end the log holds, each under the webhook-id of its event.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { TURN_ENDING_TYPES } from '@parley/conversation';
import { expectOk } from '../support/api';
import type { FakeReply } from '../support/fake-anthropic/fake-anthropic.server';
import { newBook } from '../support/factories/books';
import { projectRoot } from '../../libs/platform/src/project-root';
import { Client, clientFor, freePort, SERVICE_NODE_ARGS, startProcess, Stack } from '../support/stack';
import { useFakeStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';
import { startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';

/** About a second and a half a turn: kills land mid-turn. */
const slowAnswer = (): FakeReply => ({
  content: [{ type: 'text', text: 'The lamp was relit during the storm. '.repeat(6) }],
  delayMsPerChunk: 120,
});

/** A new API process on the stack's database and queues, listed in the stack (its stop kills it). */
async function restartApi(stack: Stack): Promise<string> {
  const port = await freePort();
  const api = startProcess(
    `api${stack.apis.length}`,
    [...SERVICE_NODE_ARGS, path.join(projectRoot(), 'dist/apps/api/src/main.js')],
    { ...stack.env, PORT: String(port) },
  );
  const base = `http://127.0.0.1:${port}`;
  stack.apis.push({ ...api, base });
  await waitFor(`${api.name} /readyz`, async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.ok, 30_000);
  return base;
}

describe('webhooks across kill -9 of the worker and the API (e2e)', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver?.close());
  const s = useFakeStack({
    fake: { defaultResponder: slowAnswer },
    env: { WEBHOOKS_ALLOW_PRIVATE_URLS: 'true', WEBHOOKS_RETRY_BASE_MS: '200', WEBHOOKS_RETRY_MAX_MS: '1000' },
  });

  it("delivers every turn's end at least once, none lost", async () => {
    const userId = `reader-${randomUUID()}`;
    let c: Client = clientFor(s.stack.base, userId);
    const hook = await c.req('POST', '/v1/webhooks', { url: receiver.url('/crash'), events: ['turn.ended'] });
    expect(hook.status).toBe(201);
    receiver.expect('/crash', hook.body.secret);
    const bookId = (await newBook(c)).id;
    const conversations: string[] = [];
    for (let i = 0; i < 6; i++)
      conversations.push(expectOk(await c.api.POST('/v1/conversations', { body: { bookId } }), 201).id);
    const postAll = async (round: number) => {
      for (const id of conversations)
        expectOk(
          await c.api.POST('/v1/conversations/{id}/messages', {
            params: { path: { id } },
            body: { content: `Round ${round}: what happened in the storm?` },
          }),
          202,
        );
    };

    // round 1: the worker dies while turns stream and the first ends are being delivered
    await postAll(1);
    await waitFor('a first delivery', async () => receiver.received('/crash').length > 0, 30_000, 20);
    s.stack.workers[0].child.kill('SIGKILL');
    s.stack.apis[0].child.kill('SIGKILL');
    await s.stack.startWorker();
    c = clientFor(await restartApi(s.stack), userId);

    // round 2: posted through the new API; the new worker dies in its turn too
    await postAll(2);
    const before = receiver.received('/crash').length;
    await waitFor('a delivery of round 2', async () => receiver.received('/crash').length > before, 30_000, 20);
    s.stack.workers[1].child.kill('SIGKILL');
    s.stack.apis[1].child.kill('SIGKILL');
    await s.stack.startWorker();
    c = clientFor(await restartApi(s.stack), userId);

    // every turn's end in the log (12 turns: a killed turn is taken over, and ends) has a delivery
    const endings = await waitFor(
      'every turn ended',
      async () => {
        const all = [];
        for (const id of conversations) {
          const events = expectOk(
            await c.api.GET('/v1/conversations/{id}/events', { params: { path: { id } } }),
          ).items.filter((e: any) => TURN_ENDING_TYPES.includes(e.type));
          all.push(...events);
        }
        return all.length === 12 ? all : undefined;
      },
      90_000,
      250,
    );
    await waitFor(
      'every end delivered',
      async () => {
        const got = new Set(receiver.received('/crash').map((r) => r.id));
        return endings.every((e: any) => got.has(`msg_${e.id}`));
      },
      60_000,
      250,
    );
    for (const e of endings) {
      const delivery = receiver.received('/crash').find((r) => r.id === `msg_${e.id}`)!;
      expect(delivery.body.data).toMatchObject({ turnId: (e.data as any).turnId, version: e.version });
    }
    expect(receiver.rejected()).toEqual([]);
  }, 240_000);
});
