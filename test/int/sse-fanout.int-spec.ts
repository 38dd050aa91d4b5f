import http from 'node:http';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { conversationStreamId } from '@parley/conversation';
import { EventStore } from '@parley/event-store';
import { StreamReads } from '../../apps/api/src/conversations/stream-reads';
import { conversationRenamed } from '../support/factories/events';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { startSseServer } from '../support/sse-server';
import { waitFor } from '../support/wait-for';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * The SSE service on a plain HTTP server against a private Postgres: one process, many
 * connections, so what is checked is the sharing (one read per stream per wake-up).
 */
describe('SSE fan-out (one reader per stream per process)', () => {
  let db: TestDatabase;
  let store: EventStore;
  const servers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
  });
  afterAll(async () => {
    for (const stop of servers) await stop();
    await db.drop();
  });
  afterEach(() => jest.restoreAllMocks());

  /** An SSE server as the API runs it (deltas and metrics aside); `notify: false` loses every notification. */
  async function startServer(env: Record<string, string> = {}, opts: { notify?: boolean } = {}) {
    const server = await startSseServer({ databaseUrl: db.url, store, env, notify: opts.notify });
    servers.push(server.stop);
    return server;
  }

  /** A raw SSE client that records the ids of the stored events it receives, and their frames. */
  function follow(port: number, conversationId: string, after = 0) {
    const ids: number[] = [];
    const frames = new Map<number, string>();
    let buffer = '';
    let ended = false;
    const req = http.get(
      { host: '127.0.0.1', port, path: `/${conversationId}?after=${after}`, agent: false },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const id = /^id: (\d+)$/m.exec(frame);
            if (id) ids.push(Number(id[1]));
            if (id) frames.set(Number(id[1]), frame);
          }
        });
        res.on('close', () => (ended = true));
      },
    );
    req.on('error', () => (ended = true));
    return {
      after,
      ids,
      frames,
      get ended() {
        return ended;
      },
      has: (n: number) => ids.length > 0 && ids[ids.length - 1] >= n,
      close: () => req.destroy(),
    };
  }

  /** A conversation stream with `n` events (versions 1..n), appended in one statement. */
  async function conversationWith(n: number, title = 't'): Promise<string> {
    const id = randomUUID();
    if (n > 0) {
      const events = range(1, n).map((i) => conversationRenamed(`${title} ${i}`));
      await store.append(conversationStreamId(id), events, { expectedVersion: 'no_stream' });
    }
    return id;
  }
  const append = (id: string, count = 1, title = 'live') =>
    store.append(
      conversationStreamId(id),
      range(1, count).map((i) => conversationRenamed(`${title} ${i}`)),
      { expectedVersion: 'any' },
    );

  it('gives 200 subscribers every event exactly once, in order, across the replay-to-live switch', async () => {
    const { port, service, watcher } = await startServer();
    const id = await conversationWith(450); // more than two replay pages
    const clients: Array<ReturnType<typeof follow>> = [];
    let appended = 450;
    // clients join while events keep coming, so many switch to live in the middle of appends
    const writer = (async () => {
      for (let i = 0; i < 60; i++) {
        await append(id, 1 + (i % 3));
        appended += 1 + (i % 3);
        await sleep(Math.random() * 10);
      }
    })();
    for (let i = 0; i < 200; i++) {
      clients.push(follow(port, id, i % 4 === 0 ? 0 : Math.floor(Math.random() * 450)));
      if (i % 10 === 0) await sleep(5);
    }
    await writer;
    await waitFor('every client to have every event', () => clients.every((c) => c.has(appended)), 30_000);
    for (const c of clients) expect(c.ids).toEqual(range(c.after + 1, appended));
    for (const c of clients) c.close();
    await waitFor('the hub to forget the stream', () => service.hub.stats().streams === 0);
    expect(service.hub.stats()).toEqual({ streams: 0, subscriptions: 0 });
    expect((watcher as unknown as { watchers: Map<string, unknown> }).watchers.size).toBe(0);
  }, 60_000);

  it('resumes a subscriber mid-stream, after the version it gives, then live', async () => {
    const { port } = await startServer();
    const id = await conversationWith(300);
    const c = follow(port, id, 123);
    await waitFor('the replay', () => c.has(300));
    await append(id, 2);
    await waitFor('the live events', () => c.has(302));
    c.close();
    expect(c.ids).toEqual(range(124, 302));
  });

  it('reads a stream once per appended event, not once per subscriber, and not at all while idle', async () => {
    const { port } = await startServer({ EVENT_POLL_MS: '300' });
    const id = await conversationWith(3);
    const clients = range(1, 50).map(() => follow(port, id));
    await waitFor('every client to be caught up', () => clients.every((c) => c.has(3)));
    await sleep(100); // the last joiners are live
    // counted on the event store itself, which the old per-connection loop called as well
    const pages = jest.spyOn(store, 'readStream');
    const versions = jest.spyOn(StreamReads.prototype, 'versions');
    await sleep(1_500); // idle: the old service read once per eventPollMs per connection (here 250 reads)
    expect(pages).toHaveBeenCalledTimes(0);
    expect(versions.mock.calls.length).toBeGreaterThanOrEqual(2); // the safety net: one statement per interval…
    expect(versions.mock.calls.length).toBeLessThanOrEqual(6); // …for the whole process
    for (let n = 4; n <= 8; n++) {
      pages.mockClear();
      await append(id);
      await waitFor(`every client to have version ${n}`, () => clients.every((c) => c.has(n)));
      expect(pages.mock.calls.length).toBeLessThanOrEqual(2); // none when announced with its events, one read otherwise, a second only if the safety net raced it
    }
    for (const c of clients) expect(c.ids).toEqual(range(1, 8));
    for (const c of clients) c.close();
  });

  it('serves an append from its announcement without reading it back, byte for byte what a replay reads', async () => {
    const { port } = await startServer({ EVENT_POLL_MS: '60000' }); // no safety net: reads are the hub's own
    const id = await conversationWith(2);
    const live = follow(port, id);
    await waitFor('the client to be live', () => live.has(2));
    await sleep(100);
    const reads = jest.spyOn(store, 'readStream');
    await append(id, 2); // alone: announced with its events
    await waitFor('the announced events', () => live.has(4));
    expect(reads).toHaveBeenCalledTimes(0);
    await append(id, 1, 'x'.repeat(9_000)); // past a notification's limit: announced by its stream alone
    await waitFor('the long event', () => live.has(5));
    expect(reads).toHaveBeenCalledTimes(1);
    reads.mockRestore();
    const replay = follow(port, id, 2);
    await waitFor('the replay', () => replay.has(5));
    expect(live.ids).toEqual([1, 2, 3, 4, 5]);
    for (const v of [3, 4, 5]) expect(live.frames.get(v)).toBe(replay.frames.get(v));
    live.close();
    replay.close();
  });

  it('delivers appends whose notification was lost, through the one-statement safety net', async () => {
    const { port, service } = await startServer({ EVENT_POLL_MS: '200' }, { notify: false });
    const ids = await Promise.all(range(1, 20).map(() => conversationWith(2)));
    const clients = ids.map((id) => follow(port, id));
    await waitFor('every client to be caught up', () => clients.every((c) => c.has(2)));
    const versions = jest.spyOn(StreamReads.prototype, 'versions');
    await Promise.all(ids.map((id) => append(id)));
    await waitFor('every client to have the new event', () => clients.every((c) => c.has(3)), 5_000);
    for (const c of clients) expect(c.ids).toEqual([1, 2, 3]);
    // each check covers every followed stream in one statement
    for (const [streamIds] of versions.mock.calls) expect(streamIds).toHaveLength(20);
    for (const c of clients) c.close();
    await waitFor('the hub to forget the streams', () => service.hub.stats().streams === 0);
  });

  it('does not let a client that stops reading hold back the others, and drops it', async () => {
    const { port } = await startServer({ SSE_SLOW_CLIENT_MS: '1000' });
    const id = await conversationWith(1);
    // a client that never reads: its socket fills up
    const slow = net.connect(port, '127.0.0.1');
    slow.write(`GET /${id}?after=0 HTTP/1.1\r\nHost: x\r\n\r\n`);
    slow.pause();
    const slowEnded = new Promise<void>((r) => slow.on('close', () => r()));
    const fast = range(1, 5).map(() => follow(port, id));
    await waitFor('the fast clients to be live', () => fast.every((c) => c.has(1)));
    const big = 'x'.repeat(20_000);
    const started = Date.now();
    for (let i = 0; i < 25; i++) await append(id, 20, `${i} ${big}`); // 10 MB, far more than socket buffers hold
    await waitFor('the fast clients to have all 501 events', () => fast.every((c) => c.has(501)), 10_000);
    expect(Date.now() - started).toBeLessThan(8_000);
    for (const c of fast) expect(c.ids).toEqual(range(1, 501));
    await sleep(1_500); // past SSE_SLOW_CLIENT_MS without reading
    let received = 0;
    slow.on('data', (d: Buffer) => (received += d.length));
    slow.resume();
    await slowEnded; // dropped: it gets what was buffered, then the end
    expect(received).toBeLessThan(500 * 20_000);
    for (const c of fast) c.close();
  });

  it('ends its streams on shutdown and forgets them', async () => {
    const { port, service, stop } = await startServer();
    const id = await conversationWith(1);
    const clients = range(1, 10).map(() => follow(port, id));
    await waitFor('the clients to be live', () => clients.every((c) => c.has(1)));
    expect(service.hub.stats()).toEqual({ streams: 1, subscriptions: 10 });
    service.beforeApplicationShutdown();
    await waitFor('every stream to end', () => clients.every((c) => c.ended));
    expect(service.hub.stats()).toEqual({ streams: 0, subscriptions: 0 });
    await stop();
  });
});
