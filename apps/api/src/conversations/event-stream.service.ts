import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { Request, Response } from 'express';
import { AppConfig, CONFIG } from '@parley/config';
import { conversationStreamId } from '@parley/conversation';
import { backoffMs, EventStore, isTransientDbError, Wakeup } from '@parley/event-store';
import { AssistantTextDelta, LiveDeltas, StreamWatcher } from '@parley/platform';
import { MetricsService } from '../metrics/metrics.service';
import { toEnvelope } from './event-envelope';

/** Past this much unsent output a client is too slow: it is dropped and reconnects with Last-Event-ID. */
export const SSE_MAX_BUFFERED_BYTES = 1 << 20;
const REPLAY_BATCH = 200;

/**
 * One SSE connection: stored events after `after`, then live ones. Both phases read the stream
 * by version from Postgres (versions of one stream commit in order), so the switch from replay
 * to live has no gap and no duplicate; notifications only say when to look again.
 */
@Injectable()
export class EventStreamService implements BeforeApplicationShutdown {
  /** open streams, each with how to end it when this process stops */
  private readonly open = new Set<() => void>();

  constructor(
    private readonly store: EventStore,
    private readonly watcher: StreamWatcher,
    private readonly deltas: LiveDeltas,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * A draining API ends its streams with a short retry hint, so clients reconnect at once (to
   * another replica, with Last-Event-ID) and the HTTP server can close.
   */
  beforeApplicationShutdown(): void {
    for (const end of this.open) end();
  }

  async serve(conversationId: string, after: number, req: Request, res: Response): Promise<void> {
    const streamId = conversationStreamId(conversationId);
    let closed = false;
    const wakeup = new Wakeup();
    const poke = wakeup.poke;
    const close = () => {
      if (closed) return;
      closed = true;
      poke();
    };
    req.on('close', close);
    res.on('close', close);
    res.on('drain', poke);
    if (req.destroyed || res.destroyed || res.writableEnded) close(); // the client left while we checked access

    this.metrics.sseConnections.inc();
    res.once('close', () => this.metrics.sseConnections.dec());
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(`retry: ${this.config.sse.retryMs}\n\n`);

    const tooSlow = () => res.writableLength > SSE_MAX_BUFFERED_BYTES;
    const drop = () => {
      res.destroy();
      close();
    };
    const endForShutdown = () => {
      if (!closed && !res.destroyed) res.write('retry: 100\n\n');
      close();
    };
    this.open.add(endForShutdown);
    const stopWatching = this.watcher.watch(streamId, poke);
    const stopDeltas = this.deltas.subscribe(conversationId, (d: AssistantTextDelta) => {
      if (closed) return;
      if (tooSlow()) return drop();
      res.write(`event: AssistantTextDelta\ndata: ${JSON.stringify(d)}\n\n`);
    });
    const ping = setInterval(() => {
      if (!closed) res.write(': ping\n\n');
    }, this.config.sse.pingMs);

    try {
      let last = after;
      let outage = 0;
      /** when the client fell behind; the deadline runs from here, whatever wakes the loop meanwhile */
      let slowSince: number | null = null;
      while (!closed) {
        wakeup.reset();
        if (tooSlow()) {
          // nothing more is written until the socket drains; a client that does not read within
          // slowClientMs is dropped, even while new events keep waking the loop
          slowSince ??= Date.now();
          const left = slowSince + this.config.sse.slowClientMs - Date.now();
          if (left <= 0) return drop();
          await wakeup.wait(left);
          continue;
        }
        slowSince = null;
        let events;
        try {
          events = await this.store.readStream(streamId, { after: last, limit: REPLAY_BATCH });
          outage = 0;
        } catch (e) {
          if (!isTransientDbError(e)) throw e;
          // the database is away: keep the stream (pings go on) and read again when it is back
          await wakeup.wait(backoffMs(++outage, 2_000));
          continue;
        }
        for (const e of events) {
          if (closed) break;
          res.write(`id: ${e.version}\nevent: ${e.type}\ndata: ${JSON.stringify(toEnvelope(e))}\n\n`);
          last = e.version;
          if (e.type === 'ConversationDeleted') return;
        }
        if (events.length < REPLAY_BATCH && !tooSlow()) await wakeup.wait(this.config.eventPollMs);
      }
    } finally {
      this.open.delete(endForShutdown);
      clearInterval(ping);
      stopWatching();
      stopDeltas();
      if (!res.destroyed) res.end();
    }
  }
}
