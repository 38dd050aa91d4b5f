import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppConfig, CONFIG } from '@parley/config';
import { AssistantTextDelta, conversationStreamId } from '@parley/conversation';
import { LiveDeltas } from '@parley/agent';
import { StreamWatcher } from '@parley/event-store';
import { MetricsService } from '../metrics/metrics.service';
import { StreamFrame } from './stream-frame';
import { StreamHub } from './stream-hub';
import { StreamReads } from './stream-reads';

/** Past this much unsent output a client is too slow: it is dropped and reconnects with Last-Event-ID. */
export const SSE_MAX_BUFFERED_BYTES = 1 << 20;

/**
 * One SSE connection: stored events after `after`, then live ones, through the process's
 * StreamHub, which reads each stream once for all its connections (stored and live events
 * alike come from the stream read by version, so there is no gap and no repeat). Here: the
 * frames, pings, live text deltas, and what to do with a client that stops reading.
 */
@Injectable()
export class EventStreamService implements BeforeApplicationShutdown, OnModuleDestroy {
  /** this process's one reader per stream */
  readonly hub: StreamHub;
  private readonly log = new Logger(EventStreamService.name);
  /** open streams, each with how to end it when this process stops */
  private readonly open = new Set<() => void>();
  /** each delta serialized once, however many connections it is written to */
  private readonly deltaFrames = new WeakMap<AssistantTextDelta, Buffer>();

  constructor(
    reads: StreamReads,
    watcher: StreamWatcher,
    private readonly deltas: LiveDeltas,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    this.hub = new StreamHub(reads, watcher, config);
  }

  /**
   * A draining API ends its streams with a short retry hint, so clients reconnect at once (to
   * another replica, with Last-Event-ID) and the HTTP server can close.
   */
  beforeApplicationShutdown(): void {
    for (const end of [...this.open]) end();
  }

  onModuleDestroy(): void {
    this.hub.close();
  }

  /**
   * Writes to the raw response (the caller has taken it from the framework). Resolves when the
   * stream ends (the client left, the conversation was deleted, shutdown).
   */
  serve(conversationId: string, after: number, req: IncomingMessage, res: ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      let closed = false;
      let slowTimer: NodeJS.Timeout | undefined;
      const tooSlow = () => res.writableLength > SSE_MAX_BUFFERED_BYTES;

      this.metrics.sseConnections.inc();
      res.once('close', () => this.metrics.sseConnections.dec());
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write(`retry: ${this.config.sse.retryMs}\n\n`);

      const finish = () => {
        if (closed) return;
        closed = true;
        this.open.delete(endForShutdown);
        clearInterval(ping);
        clearTimeout(slowTimer);
        subscription.close();
        stopDeltas();
        if (!res.destroyed) res.end();
        resolve();
      };
      const drop = () => {
        res.destroy();
        finish();
      };
      // nothing more is written until the socket drains; a client that does not read within
      // slowClientMs of falling behind is dropped, whatever happens on its stream meanwhile
      const fellBehind = () => {
        subscription.pause();
        slowTimer ??= setTimeout(drop, this.config.sse.slowClientMs);
      };
      const endForShutdown = () => {
        if (!closed && !res.destroyed) res.write('retry: 100\n\n');
        finish();
      };

      const subscription = this.hub.subscribe(conversationStreamId(conversationId), after, {
        write: (f: StreamFrame) => {
          res.write(f.bytes);
          if (f.type === 'ConversationErased' || f.type === 'ConversationDeleted') return finish();
          if (tooSlow()) fellBehind();
        },
        fail: (e) => {
          this.log.error(`SSE stream of conversation ${conversationId} failed: ${String(e)}`);
          finish();
        },
      });
      const stopDeltas = this.deltas.subscribe(conversationId, (d: AssistantTextDelta) => {
        if (closed) return;
        if (tooSlow()) return drop();
        let frame = this.deltaFrames.get(d);
        if (!frame) {
          frame = Buffer.from(`event: AssistantTextDelta\ndata: ${JSON.stringify(d)}\n\n`);
          this.deltaFrames.set(d, frame);
        }
        res.write(frame);
      });
      const ping = setInterval(() => {
        if (!closed) res.write(': ping\n\n');
      }, this.config.sse.pingMs);
      this.open.add(endForShutdown);

      req.on('close', finish);
      res.on('close', finish);
      res.on('drain', () => {
        if (closed || slowTimer === undefined || tooSlow()) return;
        clearTimeout(slowTimer);
        slowTimer = undefined;
        subscription.resume();
      });
      if (req.destroyed || res.destroyed || res.writableEnded) return finish(); // the client left while we checked access
      subscription.resume();
    });
  }
}
