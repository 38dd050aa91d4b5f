import { randomUUID } from 'node:crypto';
import type { Schemas } from '../../libs/api-client/src';
import { ApiResult, expectOk } from './api';
import { clientFor, Client, startStack, Stack } from './stack';

/** A call that fails with a problem: `[what, status, code]`, compared in one go so a failure names the call. */
export type ProblemCall = [string, () => Promise<ApiResult<unknown, { code: string }>>];

/**
 * The conversations suites' stack (two API replicas, a worker for projections, no agent: turns
 * stay pending, which is what posting tests want) and their calls, alice's unless told otherwise.
 */
export class ConversationsSuite {
  stack!: Stack;
  alice!: Client;
  bob!: Client;

  async start(): Promise<void> {
    this.stack = await startStack({
      apis: 2,
      workers: 1,
      env: { AGENT_ENABLED: 'false', SSE_SLOW_CLIENT_MS: '1000' },
    });
    this.alice = clientFor(this.stack.base, `alice-${randomUUID()}`);
    this.bob = clientFor(this.stack.base, `bob-${randomUUID()}`);
  }

  async stop(): Promise<void> {
    await this.stack?.stop();
  }

  newConversation = async (c: Client = this.alice, body: Schemas['CreateConversationDto'] = {}) =>
    expectOk(await c.api.POST('/v1/conversations', { body }), 201);

  eventsOf = async (id: string, c: Client = this.alice) =>
    expectOk(await c.api.GET('/v1/conversations/{id}/events', { params: { path: { id } } })).items;

  postMessage = (
    id: string,
    body: Schemas['PostMessageDto'],
    opts: {
      c?: Client;
      multitask?: 'enqueue' | 'reject' | 'interrupt';
      idempotencyKey?: string;
      ifMatch?: string;
    } = {},
  ) =>
    (opts.c ?? this.alice).api.POST('/v1/conversations/{id}/messages', {
      params: {
        path: { id },
        query: opts.multitask ? { multitask: opts.multitask } : undefined,
        header: {
          ...(opts.idempotencyKey ? { 'Idempotency-Key': opts.idempotencyKey } : {}),
          ...(opts.ifMatch ? { 'If-Match': opts.ifMatch } : {}),
        },
      },
      body,
    });

  rename = (id: string, title: string, c: Client = this.alice) =>
    c.api.PATCH('/v1/conversations/{id}', { params: { path: { id } }, body: { title } });

  listOf = async (c: Client = this.alice, query: { limit?: number; cursor?: string; bookId?: string } = {}) =>
    expectOk(await c.api.GET('/v1/conversations', { params: { query } }));

  answers = async (calls: ProblemCall[]) =>
    Promise.all(calls.map(async ([what, call]) => call().then((r) => [what, r.response.status, r.error?.code])));
}
