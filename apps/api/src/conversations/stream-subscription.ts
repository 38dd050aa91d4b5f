import { backoffMs, isTransientDbError, Wakeup } from '@parley/event-store';
import type { StreamChannel } from './stream-channel';
import { StreamFrame } from './stream-frame';
import { PAGE_SIZE, StreamReads } from './stream-reads';

/** Where a subscription's events go: one SSE connection. */
export interface StreamSink {
  /** May pause or close the subscription (a full socket buffer, the conversation deleted). */
  write(frame: StreamFrame): void;
  /** The stream could not be read for a reason retrying will not fix. */
  fail(error: unknown): void;
}

/**
 * One subscriber's cursor on a shared stream: every version > cursor, in order, exactly once.
 * Behind the channel's head it catches up on its own (the channel's tail, else pages from
 * Postgres); caught up, it joins the channel's live set in the same tick as its last check, so
 * the switch has no gap and no repeat. It starts paused: `resume()` starts it.
 */
export class StreamSubscription {
  /** the last version delivered */
  cursor: number;
  private paused = true;
  private closed = false;
  private catchingUp = false;
  private readonly wakeup = new Wakeup();

  constructor(
    private readonly channel: StreamChannel,
    private readonly reads: StreamReads,
    after: number,
    private readonly sink: StreamSink,
  ) {
    this.cursor = after;
  }

  /** Delivers the events after the cursor, stopping as soon as the sink pauses or closes this. */
  deliver(frames: StreamFrame[]): void {
    for (const f of frames) {
      if (this.closed || this.paused) return;
      if (f.version <= this.cursor) continue;
      this.cursor = f.version;
      this.sink.write(f);
    }
  }

  /** Nothing more is delivered until resume() (the client's socket is full). */
  pause(): void {
    this.paused = true;
    this.channel.leaveLive(this);
  }

  resume(): void {
    if (this.closed || !this.paused) return;
    this.paused = false;
    void this.catchUp();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.wakeup.poke();
    this.channel.remove(this);
  }

  fail(error: unknown): void {
    if (this.closed) return;
    this.close();
    this.sink.fail(error);
  }

  /** Something this subscription may be waiting for happened (the channel learnt the head). */
  nudge(): void {
    this.wakeup.poke();
  }

  private async catchUp(): Promise<void> {
    if (this.catchingUp) return; // a loop is running (paused and resumed while it awaited a read): it carries on
    this.catchingUp = true;
    try {
      let outage = 0;
      let atEnd = false;
      while (!this.closed && !this.paused) {
        this.wakeup.reset();
        if (this.channel.joinLive(this)) return;
        const tail = this.channel.fromTail(this.cursor);
        if (tail) {
          this.deliver(tail);
          continue;
        }
        if (atEnd && this.channel.head === undefined) {
          // read to the end before the channel knows its head: wait for it, then join or read on
          await this.wakeup.wait(1_000);
          atEnd = false;
          continue;
        }
        let frames: StreamFrame[];
        try {
          frames = await this.reads.catchUpPage(this.channel.streamId, this.cursor, this.channel.head);
          outage = 0;
        } catch (e) {
          if (!isTransientDbError(e)) return this.fail(e);
          // the database is away: keep the stream (pings go on) and read again when it is back
          await this.wakeup.wait(backoffMs(++outage, 2_000));
          continue;
        }
        this.deliver(frames);
        atEnd = frames.length < PAGE_SIZE;
      }
    } finally {
      this.catchingUp = false;
    }
  }
}
