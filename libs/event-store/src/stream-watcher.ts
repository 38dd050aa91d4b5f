import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppendNotifier } from './append-notifier';
import { Announcement } from './announcement';
import { StoredEvent } from './event.types';

/**
 * Wakes readers of one stream when anything is appended to it (any process), with the events when
 * the announcement carried them, and all readers (without events) after the LISTEN connection
 * comes back, since notifications may have been missed meanwhile.
 */
/** Called on an append to the stream: with the appended events when they came along, else read them. */
export type StreamWake = (events?: StoredEvent[]) => void;

@Injectable()
export class StreamWatcher implements OnModuleDestroy {
  private readonly watchers = new Map<string, Set<StreamWake>>();

  constructor(private readonly notifier: AppendNotifier) {
    notifier.on('append', this.onAppend);
    notifier.on('reconnected', this.onReconnected);
  }

  watch(streamId: string, wake: StreamWake): () => void {
    let set = this.watchers.get(streamId);
    if (!set) this.watchers.set(streamId, (set = new Set()));
    set.add(wake);
    return () => {
      set!.delete(wake);
      if (set!.size === 0) this.watchers.delete(streamId);
    };
  }

  private readonly onAppend = (announced: Announcement) => {
    const set = this.watchers.get(announced.streamId);
    if (!set) return;
    const events = announced.events;
    set.forEach((w) => w(events));
  };

  private readonly onReconnected = () => {
    this.watchers.forEach((set) => set.forEach((w) => w()));
  };

  onModuleDestroy(): void {
    this.notifier.off('append', this.onAppend);
    this.notifier.off('reconnected', this.onReconnected);
  }
}
