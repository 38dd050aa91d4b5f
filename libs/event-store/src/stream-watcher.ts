import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppendNotifier } from './append-notifier';

/**
 * Wakes readers of one stream when anything is appended to it (any process), and all readers
 * after the LISTEN connection comes back, since notifications may have been missed meanwhile.
 */
@Injectable()
export class StreamWatcher implements OnModuleDestroy {
  private readonly watchers = new Map<string, Set<() => void>>();

  constructor(private readonly notifier: AppendNotifier) {
    notifier.on('append', this.onAppend);
    notifier.on('reconnected', this.onReconnected);
  }

  watch(streamId: string, wake: () => void): () => void {
    let set = this.watchers.get(streamId);
    if (!set) this.watchers.set(streamId, (set = new Set()));
    set.add(wake);
    return () => {
      set!.delete(wake);
      if (set!.size === 0) this.watchers.delete(streamId);
    };
  }

  private readonly onAppend = (streamId: string) => {
    this.watchers.get(streamId)?.forEach((w) => w());
  };

  private readonly onReconnected = () => {
    this.watchers.forEach((set) => set.forEach((w) => w()));
  };

  onModuleDestroy(): void {
    this.notifier.off('append', this.onAppend);
    this.notifier.off('reconnected', this.onReconnected);
  }
}
