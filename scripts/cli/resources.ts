/**
 * The requests the commands share, each one typed call to the API. Bodies are read as the
 * shapes of ./types until the generated answer types cover them.
 */
import { randomUUID } from 'node:crypto';
import type { paths } from '@parley/api-client';
import { call, type Api } from './api';
import type { Book, Conversation, EventEnvelope, Page } from './types';

// Headers the generated types still mark as required; the API takes them as optional, and a
// header left out is not sent.
type PostHeaders = NonNullable<paths['/v1/conversations/{id}/messages']['post']['parameters']['header']>;
type PatchHeaders = NonNullable<paths['/v1/conversations/{id}']['patch']['parameters']['header']>;
type DeleteHeaders = NonNullable<paths['/v1/conversations/{id}']['delete']['parameters']['header']>;

const short = (id: string) => id.slice(0, 8);

export const listBooks = (api: Api) => call<Page<Book>>(api, 'books', () => api.client.GET('/v1/books'));

export const getBook = (api: Api, id: string) =>
  call<Book>(api, `book ${short(id)}`, () => api.client.GET('/v1/books/{id}', { params: { path: { id } } }));

export const deleteBook = (api: Api, id: string) =>
  call<void>(api, `book ${short(id)}`, () => api.client.DELETE('/v1/books/{id}', { params: { path: { id } } }));

export async function listConversations(api: Api, bookId?: string, limit = 20): Promise<Page<Conversation>> {
  return call(api, 'conversations', () =>
    api.client.GET('/v1/conversations', { params: { query: { ...(bookId ? { bookId } : {}), limit } } }),
  );
}

export const getConversation = (api: Api, id: string) =>
  call<Conversation>(api, `conversation ${short(id)}`, () =>
    api.client.GET('/v1/conversations/{id}', { params: { path: { id } } }),
  );

export const startConversation = (
  api: Api,
  body: { bookId?: string; title?: string; readingPosition?: number | null },
) =>
  call<Conversation>(api, 'new conversation', () =>
    // the generated type of readingPosition is still wrong (an object); the API takes a number or null
    api.client.POST('/v1/conversations', { body: body as never }),
  );

export const updateConversation = (api: Api, id: string, body: { title?: string; readingPosition?: number | null }) =>
  call<Conversation>(api, `conversation ${short(id)}`, () =>
    api.client.PATCH('/v1/conversations/{id}', {
      params: { path: { id }, header: {} as PatchHeaders },
      body: body as never,
    }),
  );

export const deleteConversation = (api: Api, id: string) =>
  call<void>(api, `conversation ${short(id)}`, () =>
    api.client.DELETE('/v1/conversations/{id}', { params: { path: { id }, header: {} as DeleteHeaders } }),
  );

/** Posts a message; the Idempotency-Key makes a retried post safe (it never posts twice). */
export const postMessage = (api: Api, id: string, content: string) =>
  call<{ messageId: string; turnId: string; version: number }>(api, 'message', () =>
    api.client.POST('/v1/conversations/{id}/messages', {
      params: { path: { id }, header: { 'idempotency-key': randomUUID() } as PostHeaders },
      body: { content },
    }),
  );

export const cancelTurn = (api: Api, id: string, turnId: string) =>
  call<{ turnId: string; cancelled: boolean }>(api, 'cancel', () =>
    api.client.POST('/v1/conversations/{id}/turns/{turnId}/cancel', { params: { path: { id, turnId } } }),
  );

export const forkConversation = (api: Api, id: string, version: number) =>
  call<Conversation>(api, `conversation ${short(id)}`, () =>
    api.client.POST('/v1/conversations/{id}/fork', { params: { path: { id } }, body: { version } }),
  );

/** Every event of a conversation, page by page. */
export async function allEvents(api: Api, id: string): Promise<EventEnvelope[]> {
  const events: EventEnvelope[] = [];
  let after = 0;
  for (;;) {
    const page = await call<Page<EventEnvelope>>(api, `conversation ${short(id)}`, () =>
      api.client.GET('/v1/conversations/{id}/events', { params: { path: { id }, query: { after, limit: 1000 } } }),
    );
    events.push(...page.items);
    if (!page.nextCursor || page.items.length === 0) return events;
    after = page.items[page.items.length - 1].version;
  }
}
