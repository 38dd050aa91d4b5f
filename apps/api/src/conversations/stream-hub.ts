import { Logger } from '@nestjs/common';
import { AppConfig } from '@parley/config';
import { StreamWatcher } from '@parley/event-store';
import { StreamChannel } from './stream-channel';
import { StreamReads } from './stream-reads';
import { StreamSink, StreamSubscription } from './stream-subscription';

/**
 * The streams this process serves, each read once per wake-up however many clients follow it
 * (a StreamChannel per stream id, forgotten when its last subscriber leaves). Notifications say
 * when to read, or bring the events themselves; as a net for a lost one, a single statement every eventPollMs compares the
 * versions of all followed streams with what their channels have read.
 */
export class StreamHub {
  private readonly log = new Logger(StreamHub.name);
  private readonly channels = new Map<string, StreamChannel>();
  private readonly poll: NodeJS.Timeout;
  private polling = false;

  constructor(
    private readonly reads: StreamReads,
    private readonly watcher: StreamWatcher,
    config: Pick<AppConfig, 'eventPollMs'>,
  ) {
    this.poll = setInterval(() => void this.checkVersions(), config.eventPollMs).unref();
  }

  /** A subscription to the events of `streamId` after `after`; call resume() on it to start. */
  subscribe(streamId: string, after: number, sink: StreamSink): StreamSubscription {
    let channel = this.channels.get(streamId);
    if (!channel) {
      const stopWatching = this.watcher.watch(streamId, (events) => created.wake(events));
      const created = new StreamChannel(streamId, this.reads, (c) => {
        stopWatching();
        if (this.channels.get(streamId) === c) this.channels.delete(streamId);
      });
      this.channels.set(streamId, created);
      created.start();
      channel = created;
    }
    return channel.subscribe(after, sink);
  }

  /** How many streams and subscriptions this process holds (metrics, and tests that check nothing leaks). */
  stats(): { streams: number; subscriptions: number } {
    let subscriptions = 0;
    for (const c of this.channels.values()) subscriptions += c.subscriptions.size;
    return { streams: this.channels.size, subscriptions };
  }

  /** The safety net: wakes the channels whose stream moved past what they have read. */
  async checkVersions(): Promise<void> {
    if (this.polling || this.channels.size === 0) return;
    this.polling = true;
    try {
      const known = [...this.channels.values()].filter((c) => c.head !== undefined);
      const versions = await this.reads.versions(known.map((c) => c.streamId));
      for (const c of known) if ((versions.get(c.streamId) ?? 0) > c.head! && !c.isClosed) c.wake();
    } catch (e) {
      this.log.debug(`stream versions check failed: ${String(e)}`); // the next tick tries again
    } finally {
      this.polling = false;
    }
  }

  /** Stops the version checks (the process is stopping). */
  close(): void {
    clearInterval(this.poll);
  }
}
