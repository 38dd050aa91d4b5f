import { EventStore } from './event-store';
import { EventShape, StoredEvent } from './event.types';

/** How a stream's events fold into a state. `evolve` must not change the state it is given. */
export interface StreamFold<E extends EventShape, S> {
  initial(): S;
  evolve(state: S, event: StoredEvent<E>): S;
  /**
   * The state as it is kept between loads: what no later decision can need may be dropped here,
   * so a long stream costs memory for what is still in use, not for everything it ever held.
   * Applied after the events of a load are folded in.
   */
  compact?(state: S): S;
}

export interface FoldedStream<S> {
  /** the version of the last event folded in (0: no stream) */
  version: number;
  state: S;
}

/**
 * Streams folded to their current state, kept per process and caught up by reading only the
 * events appended since: a stream's events never change once written and its versions commit in
 * order, so the state at version v plus the events after v is the state now. A command that
 * folds its stream before deciding then costs the events it has not seen, not the whole stream,
 * however long the conversation grows. The log stays the truth: every load reads it for what is
 * new, and the decision still appends at the folded version (optimistic concurrency). The least
 * recently loaded streams are forgotten past `maxStreams`.
 */
export class StreamFoldCache<E extends EventShape, S> {
  /** in load order, the most recent last */
  private readonly folded = new Map<string, FoldedStream<S>>();

  constructor(
    private readonly store: EventStore,
    private readonly fold: StreamFold<E, S>,
    private readonly maxStreams = 256,
  ) {}

  async load(streamId: string): Promise<FoldedStream<S>> {
    const known = this.folded.get(streamId) ?? { version: 0, state: this.fold.initial() };
    const events = await this.store.readStream<E>(streamId, { after: known.version });
    const now = events.length === 0 ? known : this.foldIn(known, events);
    this.keep(streamId, now);
    return now;
  }

  /**
   * The state after events this process has just appended, without reading the stream: an append
   * at the folded version that went in proves nothing came between. Undefined when the kept fold
   * is not at the version just before them (not kept, or another load moved it on): load instead.
   * A caller that decides on this state still appends at its version, so anything appended since
   * by someone else makes that append fail and the caller load.
   */
  appended(streamId: string, events: StoredEvent<E>[]): FoldedStream<S> | undefined {
    const known = this.folded.get(streamId);
    if (!known || events.length === 0 || known.version !== events[0].version - 1) return undefined;
    const now = this.foldIn(known, events);
    this.keep(streamId, now);
    return now;
  }

  /** A kept fold with the events that follow it folded in, compacted. */
  private foldIn(known: FoldedStream<S>, events: StoredEvent<E>[]): FoldedStream<S> {
    return {
      version: events[events.length - 1].version,
      state: this.compact(events.reduce((s, e) => this.fold.evolve(s, e), known.state)),
    };
  }

  private compact(state: S): S {
    return this.fold.compact ? this.fold.compact(state) : state;
  }

  get size(): number {
    return this.folded.size;
  }

  private keep(streamId: string, loaded: FoldedStream<S>): void {
    const kept = this.folded.get(streamId);
    // two loads of one stream may finish out of order: keep the later version
    const newest = kept && kept.version > loaded.version ? kept : loaded;
    this.folded.delete(streamId);
    this.folded.set(streamId, newest);
    if (this.folded.size > this.maxStreams) this.folded.delete(this.folded.keys().next().value!);
  }
}
