import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createParleyClient } from './client';
import type { ConversationStreamItem } from './streams';
import { ParleyApiError } from './problems';

/**
 * The client's stream against a scripted SSE server on loopback: each request is answered by the
 * next step of the script, and the requests' headers are kept to check what the client sent.
 */
type Step = (res: http.ServerResponse) => void;

async function scriptedServer(steps: Step[]) {
  const requests: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.headers);
    const step = steps[requests.length - 1];
    if (step) step(res);
    else res.writeHead(500).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const event = (version: number, type = 'ConversationRenamed') =>
  `id: ${version}\nevent: ${type}\ndata: ${JSON.stringify({ id: `e${version}`, type, conversationId: 'c1', version, occurredAt: new Date(0).toISOString(), metadata: {}, data: { title: `t${version}` } })}\n\n`;
const delta = (text: string) =>
  `event: AssistantTextDelta\ndata: ${JSON.stringify({ turnId: 't1', iteration: 1, attempt: 1, index: 0, text })}\n\n`;
const sse = (res: http.ServerResponse, ...frames: string[]) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write('retry: 10\n\n');
  for (const f of frames) res.write(f);
};

const summary = (item: ConversationStreamItem) =>
  item.type === 'AssistantTextDelta' ? `delta ${item.data.text}` : `${item.type} ${item.version}`;

describe('streamConversation', () => {
  let server: Awaited<ReturnType<typeof scriptedServer>> | undefined;
  afterEach(() => server?.close());

  it('yields typed events and deltas, resumes with Last-Event-ID after a drop, and drops a replayed event', async () => {
    server = await scriptedServer([
      // the first connection breaks off after version 2 and a delta
      (res) => {
        sse(res, event(1, 'ConversationStarted'), event(2), delta('Hel'));
        setTimeout(() => res.destroy(), 20);
      },
      // a 503 while the API restarts: tried again
      (res) =>
        res.writeHead(503, { 'content-type': 'application/problem+json' }).end('{"code":"database_unavailable"}'),
      // the server replays version 2 (as a replica behind could): it is not yielded twice
      (res) => sse(res, event(2), event(3), event(4, 'ConversationErased')),
    ]);
    const statuses: string[] = [];
    const client = createParleyClient({ baseUrl: `${server.base}/`, token: () => 'tok' });
    const stream = client.streamConversation('c1', { onStatus: (s) => statuses.push(s) });
    const seen: string[] = [];
    for await (const item of stream) seen.push(summary(item));

    // the stream ends by itself after the erasure: nothing follows it
    expect(seen).toEqual([
      'ConversationStarted 1',
      'ConversationRenamed 2',
      'delta Hel',
      'ConversationRenamed 3',
      'ConversationErased 4',
    ]);
    expect(stream.lastEventId).toBe(4);
    expect(server.requests.map((h) => h['last-event-id'])).toEqual([undefined, '2', '2']);
    expect(server.requests.every((h) => h.authorization === 'Bearer tok')).toBe(true);
    expect(server.requests[0].accept).toBe('text/event-stream');
    expect(statuses).toEqual(['open', 'reconnecting', 'reconnecting', 'open']);
  });

  it('starts after the given Last-Event-ID and skips event types newer than the client', async () => {
    server = await scriptedServer([(res) => sse(res, event(8, 'SomethingNew'), event(9))]);
    const stream = createParleyClient({ baseUrl: server.base }).streamConversation('c1', { lastEventId: 7 });
    for await (const item of stream) {
      expect(summary(item)).toBe('ConversationRenamed 9');
      break; // leaving the loop closes the connection
    }
    expect(server.requests[0]['last-event-id']).toBe('7');
    expect(server.requests[0].authorization).toBeUndefined();
  });

  it('throws the refusal of a 404 with its problem, without retrying', async () => {
    server = await scriptedServer([
      (res) =>
        res
          .writeHead(404, { 'content-type': 'application/problem+json' })
          .end('{"status":404,"code":"conversation_not_found","detail":"Conversation not found"}'),
    ]);
    const stream = createParleyClient({ baseUrl: server.base }).streamConversation('gone');
    const error = await (async () => {
      for await (const _ of stream) return undefined;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ParleyApiError);
    expect(error).toMatchObject({ status: 404, code: 'conversation_not_found', detail: 'Conversation not found' });
    expect(server.requests).toHaveLength(1);
  });

  it('ends quietly on close() while waiting for the next frame', async () => {
    server = await scriptedServer([(res) => sse(res, event(1, 'ConversationStarted'))]);
    const stream = createParleyClient({ baseUrl: server.base }).streamConversation('c1');
    const seen: string[] = [];
    for await (const item of stream) {
      seen.push(summary(item));
      setTimeout(() => stream.close(), 20); // the loop is then waiting on an open, silent connection
    }
    expect(seen).toEqual(['ConversationStarted 1']);
  });
});

describe('followBook', () => {
  it('yields the progress until the book is ready', async () => {
    const book = (phase: string) => JSON.stringify({ id: 'b1', title: 'Alice', status: phase, chapters: [] });
    const server = await scriptedServer([
      (res) => sse(res, `event: progress\ndata: ${book('chunking')}\n\n`, `event: ready\ndata: ${book('ready')}\n\n`),
    ]);
    try {
      const seen: string[] = [];
      for await (const p of createParleyClient({ baseUrl: server.base }).followBook('b1'))
        seen.push(`${p.type} ${p.book.title}`);
      expect(seen).toEqual(['progress Alice', 'ready Alice']);
    } finally {
      await server.close();
    }
  });
});

describe('a conversation stream, opened when made', () => {
  it('connects before a loop asks, and `opened` settles when the server accepted it', async () => {
    const server = await scriptedServer([(res) => sse(res, event(1, 'ConversationStarted'))]);
    try {
      const stream = createParleyClient({ baseUrl: server.base }).streamConversation('c1');
      await stream.opened; // no loop yet
      expect(server.requests).toHaveLength(1);
      for await (const item of stream) {
        expect(summary(item)).toBe('ConversationStarted 1');
        break;
      }
    } finally {
      await server.close();
    }
  });

  it('rejects `opened` with the refusal', async () => {
    const server = await scriptedServer([(res) => res.writeHead(401).end('{"code":"token_invalid"}')]);
    try {
      const stream = createParleyClient({ baseUrl: server.base, token: 'bad' }).streamConversation('c1');
      await expect(stream.opened).rejects.toMatchObject({ status: 401, code: 'token_invalid' });
      stream.close();
    } finally {
      await server.close();
    }
  });
});
