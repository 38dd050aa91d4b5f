import { ROOT_CONTEXT } from '@opentelemetry/api';
import { backoffMs, isTransientDbError, linksOf, StoredEvent, tracer } from '@parley/event-store';
import { StreamFrame, toStreamFrame } from './stream-frame';
import { PAGE_SIZE, StreamReads } from './stream-reads';
import { StreamSink, StreamSubscription } from './stream-subscription';

/** The recent events a channel keeps, so a subscriber a little behind catches up without a query. */
const TAIL_MAX_EVENTS = 256;
/** …and no more bytes of them than this, so a thousand busy streams stay small in memory. */
const TAIL_MAX_BYTES = 128 * 1024;

/**
 * One stream's shared reader in this process. On each wake-up it reads the stream once after
 * `head`, the highest version it has read, and hands the new events to every live subscriber;
 * a subscriber behind `head` catches up on its own (tail or Postgres) and then joins live.
 * Versions of one stream commit in order, so "versions > cursor, in order" never has a gap.
 */
export class StreamChannel {
  /** the highest version read; undefined until the stream's version is first known */
  head: number | undefined;
  readonly subscriptions = new Set<StreamSubscription>();
  private readonly live = new Set<StreamSubscription>();
  private readonly tail: StreamFrame[] = [];
  private tailBytes = 0;
  /** a wake-up came since the last read began: read (again) */
  private dirty = false;
  private reading = false;
  private outage = 0;
  private closed = false;
  private retry?: NodeJS.Timeout;

  constructor(
    readonly streamId: string,
    private readonly reads: StreamReads,
    private readonly onEmpty: (channel: StreamChannel) => void,
  ) {}

  /** Call once, after the stream is watched: learns the stream's version, from which it reads on. */
  start(): void {
    void this.learnHead();
  }

  subscribe(after: number, sink: StreamSink): StreamSubscription {
    const sub = new StreamSubscription(this, this.reads, after, sink);
    this.subscriptions.add(sub);
    return sub;
  }

  /** Something was appended: take the events the announcement brought, or read them. */
  readonly wake = (announced?: StoredEvent[]): void => {
    if (announced && this.takeAnnounced(announced)) return;
    this.dirty = true;
    void this.pump();
  };

  /** Joins the live set if the subscriber has everything up to `head`; synchronous, so no event slips between. */
  joinLive(sub: StreamSubscription): boolean {
    if (this.closed || this.head === undefined || sub.cursor < this.head) return false;
    this.live.add(sub);
    return true;
  }

  leaveLive(sub: StreamSubscription): void {
    this.live.delete(sub);
  }

  /** The events after `cursor` up to `head`, when the tail still holds all of them. */
  fromTail(cursor: number): StreamFrame[] | undefined {
    if (this.tail.length === 0 || this.tail[0].version > cursor + 1) return undefined;
    return this.tail.slice(cursor + 1 - this.tail[0].version);
  }

  remove(sub: StreamSubscription): void {
    this.subscriptions.delete(sub);
    this.live.delete(sub);
    if (this.subscriptions.size > 0 || this.closed) return;
    this.closed = true;
    clearTimeout(this.retry);
    this.onEmpty(this);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private async learnHead(): Promise<void> {
    for (let attempt = 1; !this.closed; attempt++) {
      try {
        const version = (await this.reads.versions([this.streamId])).get(this.streamId) ?? 0;
        if (this.closed) return;
        this.head = version;
        // subscribers that reached the end of the stream were waiting for this to join live
        for (const sub of this.subscriptions) sub.nudge();
        if (this.dirty) void this.pump(); // appends announced while the version was being read
        return;
      } catch (e) {
        if (!isTransientDbError(e)) return this.fail(e);
        await new Promise((r) => setTimeout(r, backoffMs(attempt, 2_000)).unref());
      }
    }
  }

  private async pump(): Promise<void> {
    if (this.reading || this.closed || this.head === undefined) return;
    this.reading = true;
    try {
      while (this.dirty && !this.closed) {
        this.dirty = false;
        const frames = await this.reads.page(this.streamId, this.head);
        this.outage = 0;
        this.accept(frames);
        if (frames.length === PAGE_SIZE) this.dirty = true; // more behind this page
      }
    } catch (e) {
      if (!isTransientDbError(e)) return this.fail(e);
      // the database is away: live subscribers keep their connections (and pings); read again later
      clearTimeout(this.retry);
      this.retry = setTimeout(() => this.wake(), backoffMs(++this.outage, 2_000)).unref();
    } finally {
      this.reading = false;
    }
  }

  /**
   * Announced events that follow `head` with no gap are what a read would return; while a read is
   * under way they are left to it (it reads again after), so events go out in version order.
   */
  private takeAnnounced(events: StoredEvent[]): boolean {
    if (this.closed || this.reading || this.head === undefined || events[0]?.version !== this.head + 1) return false;
    this.accept(events.map(toStreamFrame));
    return true;
  }

  /** New events (version > head) go to the tail and to every live subscriber. */
  private accept(frames: StreamFrame[]): void {
    const fresh = frames.filter((f) => f.version > this.head!);
    if (fresh.length === 0) return;
    for (const f of fresh) {
      // the earlier events' text was redacted in the log (a withdrawn book): the tail's copies go
      if (f.type === 'PassagesWithdrawn') {
        this.tail.length = 0;
        this.tailBytes = 0;
      }
      this.tail.push(f);
      this.tailBytes += f.bytes.length;
    }
    this.head = fresh[fresh.length - 1].version;
    while (this.tail.length > 1 && (this.tail.length > TAIL_MAX_EVENTS || this.tailBytes > TAIL_MAX_BYTES)) {
      this.tailBytes -= this.tail.shift()!.bytes.length;
    }
    // one span a wake-up, linked to the traces that wrote the events, however many clients get them
    const span = tracer.startSpan(
      'sse deliver',
      { attributes: { 'parley.stream.id': this.streamId, 'parley.events.count': fresh.length } },
      ROOT_CONTEXT,
    );
    if (span.isRecording()) {
      span.addLinks(linksOf(fresh.map((f) => ({ metadata: { traceparent: f.traceparent } }))));
      span.setAttribute('parley.sse.subscribers', this.live.size);
    }
    // a copy: writing may drop a subscriber (slow, deleted conversation) while we go through them
    for (const sub of [...this.live]) sub.deliver(fresh);
    span.end();
  }

  /** A read failed for a reason retrying will not fix: end every subscription (clients reconnect). */
  private fail(error: unknown): void {
    for (const sub of [...this.subscriptions]) sub.fail(error);
  }
}
