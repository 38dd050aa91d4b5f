/**
 * The API's SSE service alone on a plain HTTP server (`GET /<conversationId>?after=N`), on a
 * given database: for tests of streaming that need no auth, Redis deltas or metrics.
 */
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { loadConfig } from '@parley/config';
import { LiveDeltas } from '@parley/agent';
import { AppendNotifier, EventStore, StreamWatcher } from '@parley/event-store';
import { ReadReplica } from '@parley/platform';
import { EventStreamService } from '../../apps/api/src/conversations/event-stream.service';
import { StreamReads } from '../../apps/api/src/conversations/stream-reads';
import type { MetricsService } from '../../apps/api/src/metrics/metrics.service';

export interface SseServerOptions {
  /** the primary's URL, for the LISTEN connection */
  databaseUrl: string;
  store: EventStore;
  /** where catch-up may read (default: the store's pool alone) */
  reads?: ReadReplica;
  env?: Record<string, string>;
  /** false: the notifier never listens, so every notification is lost */
  notify?: boolean;
}

export async function startSseServer(o: SseServerOptions) {
  const config = loadConfig({ NODE_ENV: 'development', DATABASE_URL: o.databaseUrl, LOG_LEVEL: 'silent', ...o.env });
  const notifier = new AppendNotifier(o.databaseUrl);
  const watcher = new StreamWatcher(notifier);
  if (o.notify !== false) await notifier.start(); // listening once it resolves: the watcher listens for appends
  const deltas = { subscribe: () => () => undefined } as unknown as LiveDeltas; // no Redis here: deltas are not what is tested
  const metrics = { sseConnections: { inc: () => undefined, dec: () => undefined } } as unknown as MetricsService;
  const reads = o.reads ?? new ReadReplica(o.store.pool);
  const service = new EventStreamService(new StreamReads(o.store, reads), watcher, deltas, config, metrics);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const after = Number(url.searchParams.get('after') ?? 0);
    void service.serve(url.pathname.slice(1), after, req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const stop = async () => {
    service.beforeApplicationShutdown();
    service.onModuleDestroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    watcher.onModuleDestroy();
    await notifier.stop();
  };
  return { service, watcher, port, stop };
}
