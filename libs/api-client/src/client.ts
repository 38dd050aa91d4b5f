/**
 * The client: openapi-fetch typed by the generated schema (every path, body and answer of
 * docs/openapi.json), a bearer token on each request, and the SSE streams as iterators.
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from './schema';
import {
  followBook,
  streamConversation,
  type BookProgressStream,
  type ConversationStream,
  type StreamOptions,
} from './streams';

export interface ParleyClientOptions {
  /** the API's origin, e.g. http://127.0.0.1:3000 (paths carry their /v1 prefix) */
  baseUrl: string;
  /** a bearer token; a function is asked before each request (a token that is renewed) */
  token?: string | (() => string | undefined);
  /** the fetch to use (default: the global one) */
  fetch?: typeof globalThis.fetch;
}

export interface ParleyClient extends Client<paths> {
  /** a conversation's events and the reply's text as it comes, resuming with Last-Event-ID after a drop */
  streamConversation(id: string, options?: StreamOptions): ConversationStream;
  /** a book's reading progress, until `ready` or `failed` */
  followBook(id: string, options?: Omit<StreamOptions, 'lastEventId'>): BookProgressStream;
}

export function createParleyClient(options: ParleyClientOptions): ParleyClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  // looked up at each call, so a test or a page that replaces globalThis.fetch later is followed
  const fetchImpl: typeof globalThis.fetch = (input, init) => (options.fetch ?? globalThis.fetch)(input, init);
  const token = () => (typeof options.token === 'function' ? options.token() : options.token);
  const client = createClient<paths>({ baseUrl, fetch: options.fetch });
  const auth: Middleware = {
    onRequest({ request }) {
      const t = token();
      if (t && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${t}`);
      return request;
    },
  };
  client.use(auth);
  const connection = {
    baseUrl,
    fetch: fetchImpl,
    headers: (): Record<string, string> => {
      const t = token();
      return t ? { authorization: `Bearer ${t}` } : {};
    },
  };
  return Object.assign(client, {
    streamConversation: (id: string, o?: StreamOptions) => streamConversation(connection, id, o),
    followBook: (id: string, o?: Omit<StreamOptions, 'lastEventId'>) => followBook(connection, id, o),
  });
}
