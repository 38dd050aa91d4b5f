import { randomUUID } from 'node:crypto';
import { TURN_ENDING_TYPES } from '@parley/conversation';
import { Envelope, expectOk, turnOf } from './api';
import { FakeAnthropic, FakeAnthropicOptions } from './fake-anthropic/fake-anthropic.server';
import { newBook } from './factories/books';
import { Client, clientFor, fakeAnthropicEnv, startStack, Stack } from './stack';
import { waitFor } from './wait-for';

/**
 * What most e2e tests do with a reader's conversations: start one about a book, read its whole
 * log (every page), post a question and wait for its turn to end. The reader and the book are
 * read when called (they are made in a beforeAll).
 */
export function conversationHelpers(readerOf: () => Client, bookOf: () => string | undefined = () => undefined) {
  const conversation = async (): Promise<string> =>
    expectOk(await readerOf().api.POST('/v1/conversations', { body: { bookId: bookOf() } }), 201).id;

  const events = async (id: string): Promise<Envelope[]> => {
    const all: Envelope[] = [];
    for (let after = 0; ;) {
      const page = expectOk(
        await readerOf().api.GET('/v1/conversations/{id}/events', {
          params: { path: { id }, query: { after, limit: 1000 } },
        }),
      );
      all.push(...page.items);
      if (!page.nextCursor || page.items.length === 0) return all;
      after = page.items[page.items.length - 1].version;
    }
  };

  /** Posts `content` and resolves with the turn's ending event (AssistantReplied, TurnFailed or TurnCancelled). */
  const ask = async (
    id: string,
    content: string,
    timeoutMs = 20_000,
  ): Promise<{ turnId: string; ending: Envelope }> => {
    const { turnId } = expectOk(
      await readerOf().api.POST('/v1/conversations/{id}/messages', { params: { path: { id } }, body: { content } }),
      202,
    );
    const ending = await waitFor(
      `turn ${turnId} to end`,
      async () => (await events(id)).find((e) => turnOf(e) === turnId && TURN_ENDING_TYPES.includes(e.type)),
      timeoutMs,
    );
    return { turnId, ending };
  };

  return { conversation, events, ask };
}

/** A suite's service: the fake Messages API, an API and workers pointed at it, a reader with a book. */
export interface ReaderStack {
  fake: FakeAnthropic;
  stack: Stack;
  alice: Client;
  bookId: string;
}

/** Starts a ReaderStack (call it in a beforeAll; stop it with stopReaderStack in the afterAll). */
export async function startReaderStack(
  opts: { fake?: FakeAnthropicOptions; workers?: number; env?: Record<string, string> } = {},
): Promise<ReaderStack> {
  const fake = await FakeAnthropic.start(opts.fake);
  const stack = await startStack({ workers: opts.workers, env: { ...fakeAnthropicEnv(fake.url), ...opts.env } });
  const alice = clientFor(stack.base, `reader-${randomUUID()}`);
  return { fake, stack, alice, bookId: (await newBook(alice)).id };
}

export async function stopReaderStack(s: Partial<Pick<ReaderStack, 'fake' | 'stack'>>): Promise<void> {
  await s.stack?.stop();
  await s.fake?.close();
}
