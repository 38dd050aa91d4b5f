import { EventStore } from './event-store';
import { EventShape, StoredEvent } from './event.types';
import { FoldSnapshots } from './fold-snapshots';
import { decodeState, encodeState } from './state-codec';

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
  /**
   * Snapshots of this fold's state, one every `every` events of a stream. `id` names the fold and
   * its version: change it whenever `evolve` or `compact` change what they keep, and the older
   * snapshots are no longer read (the streams are folded from the log and snapshotted anew).
   */
  snapshots?: { id: string; every: number };
  /**
   * An event after which the stream's earlier events may read otherwise than when this process
   * folded them (their data redacted: a withdrawn book's passages): a kept fold is let go and the
   * stream folded from the log again.
   */
  foldsAnewAfter?(event: StoredEvent<E>): boolean;
}

/** Events between two snapshots of a stream: a process new to the stream folds at most about twice this many. */
export const SNAPSHOT_SPAN_EVENTS = 200;

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
 * recently loaded streams are forgotten past `maxStreams`. With snapshots (`fold.snapshots` and a
 * `FoldSnapshots`), a stream this process does not keep starts from its latest snapshot, so a new
 * process (after a deploy) or a forgotten stream costs a bounded read too. A process keeps one
 * cache per fold: every load, read ahead and own append of a stream goes through it.
 */
export class StreamFoldCache<E extends EventShape, S> {
  /** in load order, the most recent last */
  private readonly folded = new Map<string, Kept<S>>();
  /**
   * Each stream's latest read begun, while it is under way or after it failed (until the next):
   * until it has succeeded, what is kept of the stream may be older than it (see `latest`).
   */
  private readonly latestRead = new Map<string, Promise<FoldedStream<S>>>();

  constructor(
    private readonly store: EventStore,
    private readonly fold: StreamFold<E, S>,
    private readonly maxStreams = 256,
    /** where the fold's snapshots are kept (`fold.snapshots` says how often) */
    private readonly snapshots?: FoldSnapshots,
  ) {}

  /** The stream now: what is kept, with the events the log has beyond it. */
  async load(streamId: string): Promise<FoldedStream<S>> {
    const read = this.read(streamId);
    this.latestRead.delete(streamId); // the most recent last
    this.latestRead.set(streamId, read);
    if (this.latestRead.size > this.maxStreams) {
      // the stream's kept fold goes with its record: `latest` could no longer tell whether to trust it
      const oldest = this.latestRead.keys().next().value!;
      this.latestRead.delete(oldest);
      this.folded.delete(oldest);
    }
    const folded = await read;
    if (this.latestRead.get(streamId) === read) this.latestRead.delete(streamId);
    return folded;
  }

  /**
   * The stream as of the latest read of it begun in this process (waited for while under way),
   * with what this process appended or was told since, without a read of its own: for a caller
   * that knows a read began after the moment it cares about (its job was taken, it appended).
   * Read when nothing is kept, or when that latest read failed.
   */
  async latest(streamId: string): Promise<FoldedStream<S>> {
    const read = this.latestRead.get(streamId);
    const succeeded = read
      ? await read.then(
          () => true,
          () => false,
        )
      : true;
    return (succeeded && this.kept(streamId)) || this.load(streamId);
  }

  private async read(streamId: string): Promise<FoldedStream<S>> {
    let kept = this.folded.get(streamId);
    let since = kept && (await this.store.readStream<E>(streamId, { after: kept.version }));
    if (since && this.foldsAnew(since)) {
      this.folded.delete(streamId);
      [kept, since] = [undefined, undefined];
    }
    const { known, events } = kept && since ? { known: kept, events: since } : await this.loadUnknown(streamId);
    const now = events.length === 0 ? known : this.foldIn(known, events);
    this.keep(streamId, now);
    return { version: now.version, state: now.state };
  }

  /**
   * A stream this process does not keep: read from its start. One that turns out longer than a
   * snapshot's span starts from its latest snapshot instead, so however long the stream, a load
   * folds at most about two spans of events (the first span read is what says it is long).
   */
  private async loadUnknown(streamId: string): Promise<{ known: Kept<S>; events: StoredEvent<E>[] }> {
    const start: Kept<S> = { version: 0, state: this.fold.initial(), snapshotAt: 0 };
    const span = this.snapshots && this.fold.snapshots?.every;
    if (!span) return { known: start, events: await this.store.readStream<E>(streamId) };
    const first = await this.store.readStream<E>(streamId, { limit: span });
    if (first.length < span) return { known: start, events: first };
    const snapshot = await this.snapshotOf(streamId);
    if (snapshot && snapshot.version > first[first.length - 1].version)
      return { known: snapshot, events: await this.store.readStream<E>(streamId, { after: snapshot.version }) };
    const rest = await this.store.readStream<E>(streamId, { after: first[first.length - 1].version });
    return { known: start, events: [...first, ...rest] };
  }

  /** The stream's latest snapshot of this fold; none when it cannot be read (the log still can). */
  private async snapshotOf(streamId: string): Promise<Kept<S> | undefined> {
    try {
      const found = await this.snapshots!.latest(streamId, this.fold.snapshots!.id);
      if (!found) return undefined;
      return { version: found.version, state: decodeState<S>(found.stateJson), snapshotAt: found.version };
    } catch {
      return undefined;
    }
  }

  /**
   * The state after events that follow the kept fold, without reading the stream: events this
   * process has just appended (an append at the folded version that went in proves nothing came
   * between), or events an announcement brought. Undefined when the kept fold is not at the
   * version just before them (not kept, behind, or another load moved it on): load instead.
   * A caller that decides on this state still appends at its version, so anything appended since
   * by someone else makes that append fail and the caller load.
   */
  appended(streamId: string, events: StoredEvent<E>[]): FoldedStream<S> | undefined {
    const known = this.folded.get(streamId);
    if (!known || events.length === 0 || known.version !== events[0].version - 1) return undefined;
    if (this.foldsAnew(events)) {
      this.folded.delete(streamId); // the next load reads the stream anew
      return undefined;
    }
    const now = this.foldIn(known, events);
    this.keep(streamId, now);
    return { version: now.version, state: now.state };
  }

  /** The fold as kept, without reading: as current as what this process has read, appended or been told. */
  kept(streamId: string): FoldedStream<S> | undefined {
    const known = this.folded.get(streamId);
    return known && { version: known.version, state: known.state };
  }

  private foldsAnew(events: StoredEvent<E>[]): boolean {
    return !!this.fold.foldsAnewAfter && events.some((e) => this.fold.foldsAnewAfter!(e));
  }

  /** A kept fold with the events that follow it folded in, compacted. */
  private foldIn(known: Kept<S>, events: StoredEvent<E>[]): Kept<S> {
    return {
      version: events[events.length - 1].version,
      state: this.compact(events.reduce((s, e) => this.fold.evolve(s, e), known.state)),
      snapshotAt: known.snapshotAt,
    };
  }

  private compact(state: S): S {
    return this.fold.compact ? this.fold.compact(state) : state;
  }

  get size(): number {
    return this.folded.size;
  }

  private keep(streamId: string, loaded: Kept<S>): void {
    const kept = this.folded.get(streamId);
    // two loads of one stream may finish out of order: keep the later version
    const newest = kept && kept.version > loaded.version ? kept : loaded;
    this.folded.delete(streamId);
    this.folded.set(streamId, newest);
    if (this.folded.size > this.maxStreams) this.folded.delete(this.folded.keys().next().value!);
    this.snapshotIfDue(streamId, newest);
  }

  /**
   * Saves the state once a span of events has passed since the last snapshot, without waiting:
   * a snapshot only shortens later loads, so one that fails is taken again a span later.
   */
  private snapshotIfDue(streamId: string, kept: Kept<S>): void {
    const config = this.fold.snapshots;
    if (!this.snapshots || !config || kept.version - kept.snapshotAt < config.every) return;
    kept.snapshotAt = kept.version;
    let stateJson: string;
    try {
      stateJson = encodeState(kept.state);
    } catch {
      return;
    }
    this.snapshots.save(streamId, config.id, { version: kept.version, stateJson }).catch(() => undefined);
  }
}

/** A fold as this process keeps it: with the version of the stream's last snapshot it knows of. */
interface Kept<S> extends FoldedStream<S> {
  snapshotAt: number;
}
