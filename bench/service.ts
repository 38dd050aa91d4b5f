/**
 * Helpers for the sections that run the service as processes (test/support/stack.ts): a stack
 * that is always stopped, conversations, posting a message and timing it to its reply on SSE.
 */
import { randomUUID } from 'node:crypto';
import { clientFor, startStack, Stack, type Client } from '../test/support/stack';
import { benchNodeArgs, onAbort, turnWatcher } from './util';

/** Env every bench stack gets: no rate limit in the way, quiet logs. */
export const BENCH_ENV = {
  LOG_LEVEL: 'error',
  RATE_LIMIT_POSTS_PER_MIN: '100000000',
  RATE_LIMIT_FORKS_PER_MIN: '100000000',
  RATE_LIMIT_CONVERSATIONS_PER_MIN: '100000000',
  RATE_LIMIT_BATCHES_PER_MIN: '100000000',
  RATE_LIMIT_SEARCHES_PER_MIN: '100000000',
  RATE_LIMIT_MCP_ASKS_PER_MIN: '100000000',
  SSE_MAX_STREAMS_PER_READER: '100000000',
};

export async function withStack<T>(
  opts: Parameters<typeof startStack>[0],
  fn: (stack: Stack) => Promise<T>,
): Promise<T> {
  const stack = await startStack({
    ...opts,
    env: { ...BENCH_ENV, ...opts?.env },
    nodeArgs: opts?.nodeArgs ?? benchNodeArgs(),
  });
  const stop = () => stack.stop();
  onAbort.add(stop);
  try {
    return await fn(stack);
  } finally {
    onAbort.delete(stop);
    await stack.stop();
  }
}

export function benchClient(stack: Stack): Client {
  // a day: a soak runs for an hour or more after its client signs in
  return clientFor(stack.base, `bench-${randomUUID()}`, { ttlSeconds: 86_400 });
}

export async function newConversation(c: Client, bookId?: string): Promise<string> {
  const r = await c.req('POST', '/v1/conversations', bookId ? { bookId } : {});
  if (r.status !== 201) throw new Error(`POST /v1/conversations: ${r.status} ${r.text}`);
  return r.body.id as string;
}

export async function post(c: Client, id: string, content: string): Promise<{ status: number; turnId?: string }> {
  const r = await c.req('POST', `/v1/conversations/${id}/messages`, { content });
  return { status: r.status, turnId: r.body?.turnId };
}

export type LiveConversation = Awaited<ReturnType<typeof liveConversation>>;

/** A conversation with its stream open: `turn(content)` posts and resolves at the turn's ending. */
export async function liveConversation(c: Client, bookId?: string) {
  const id = await newConversation(c, bookId);
  const watcher = await turnWatcher(c.base, c.auth, id);
  return {
    id,
    close: watcher.close,
    async turn(content: string, timeoutMs = 120_000): Promise<{ ms: number; type: string; turnId: string }> {
      const s = performance.now();
      const p = await post(c, id, content);
      if (p.status !== 202 || !p.turnId) throw new Error(`POST message: ${p.status}`);
      const end = await watcher.waitReply(p.turnId, timeoutMs);
      return { ms: end.at - s, type: end.type, turnId: p.turnId };
    },
  };
}
