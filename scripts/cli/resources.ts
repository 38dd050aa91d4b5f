/** The requests the commands share, each one typed call to the API (types from the OpenAPI document). */
import { randomUUID } from 'node:crypto';
import { call, type Api } from './api';
import type { Conversation, EventEnvelope, Page } from './types';

const short = (id: string) => id.slice(0, 8);

/** The caller's own books and their tenant's catalogue, newest first (the first 500). */
export const listBooks = (api: Api) =>
  call(api, 'books', () => api.client.GET('/v1/books', { params: { query: { limit: 500 } } }));

export const getBook = (api: Api, id: string) =>
  call(api, `book ${short(id)}`, () => api.client.GET('/v1/books/{id}', { params: { path: { id } } }));

export const deleteBook = (api: Api, id: string) =>
  call(api, `book ${short(id)}`, () => api.client.DELETE('/v1/books/{id}', { params: { path: { id } } }));

export async function listConversations(api: Api, bookId?: string, limit = 20): Promise<Page<Conversation>> {
  return call(api, 'conversations', () =>
    api.client.GET('/v1/conversations', { params: { query: { ...(bookId ? { bookId } : {}), limit } } }),
  );
}

export const getConversation = (api: Api, id: string) =>
  call(api, `conversation ${short(id)}`, () => api.client.GET('/v1/conversations/{id}', { params: { path: { id } } }));

export const startConversation = (
  api: Api,
  body: { bookId?: string; title?: string; readingPosition?: number | null },
) => call(api, 'new conversation', () => api.client.POST('/v1/conversations', { body }));

export const updateConversation = (api: Api, id: string, body: { title?: string; readingPosition?: number | null }) =>
  call(api, `conversation ${short(id)}`, () =>
    api.client.PATCH('/v1/conversations/{id}', {
      params: { path: { id } },
      body,
    }),
  );

export const deleteConversation = (api: Api, id: string) =>
  call(api, `conversation ${short(id)}`, () =>
    api.client.DELETE('/v1/conversations/{id}', { params: { path: { id } } }),
  );

/** Posts a message; the Idempotency-Key makes a retried post safe (it never posts twice). */
export const postMessage = (api: Api, id: string, content: string) =>
  call(api, 'message', () =>
    api.client.POST('/v1/conversations/{id}/messages', {
      params: { path: { id }, header: { 'Idempotency-Key': randomUUID() } },
      body: { content },
    }),
  );

export const cancelTurn = (api: Api, id: string, turnId: string) =>
  call(api, 'cancel', () =>
    api.client.POST('/v1/conversations/{id}/turns/{turnId}/cancel', { params: { path: { id, turnId } } }),
  );

export const decideApproval = (
  api: Api,
  id: string,
  turnId: string,
  answer: { toolCallId: string; approved: boolean; reason?: string },
) =>
  call(api, 'approval', () =>
    api.client.POST('/v1/conversations/{id}/turns/{turnId}/approvals', {
      params: { path: { id, turnId } },
      body: answer,
    }),
  );

export const forkConversation = (api: Api, id: string, version: number) =>
  call(api, `conversation ${short(id)}`, () =>
    api.client.POST('/v1/conversations/{id}/fork', { params: { path: { id } }, body: { version } }),
  );

/** Every event of a conversation, page by page. */
export async function allEvents(api: Api, id: string): Promise<EventEnvelope[]> {
  const events: EventEnvelope[] = [];
  let after = 0;
  for (;;) {
    const page = await call(api, `conversation ${short(id)}`, () =>
      api.client.GET('/v1/conversations/{id}/events', { params: { path: { id }, query: { after, limit: 1000 } } }),
    );
    events.push(...page.items);
    if (!page.nextCursor || page.items.length === 0) return events;
    after = page.items[page.items.length - 1].version;
  }
}
