import { TURN_ENDING_TYPES } from '@parley/conversation';
import { Envelope, expectOk, turnOf } from './api';
import { Client } from './stack';
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
