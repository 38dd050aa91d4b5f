import { Inject, Injectable } from '@nestjs/common';
import { AppConfig, CONFIG } from '@parley/config';
import {
  ConversationEvent,
  conversationStreamId,
  TURN_ENDING_TYPES,
  TurnCancelled,
  TurnFailed,
  AssistantReplied,
  ToolApprovalRequested,
} from '@parley/conversation';
import { EventStore, StoredEvent, StreamWatcher, Wakeup } from '@parley/event-store';

/**
 * How a turn ended, as its last event says; `erased` when the conversation was erased first; or
 * the approval it stopped for (it goes on once the reader answers, however long that takes).
 */
export type TurnEnding =
  | StoredEvent<AssistantReplied>
  | StoredEvent<TurnFailed>
  | StoredEvent<TurnCancelled>
  | StoredEvent<ToolApprovalRequested>
  | { type: 'erased' };

/**
 * Follows one turn in the log until it ends: the conversation's events after `after`, read on
 * each announced append (StreamWatcher, from any process), and every EVENT_POLL_MS besides, as the
 * SSE stream does against a lost notification. Each event of the turn goes to `onEvent` in order.
 */
@Injectable()
export class TurnFollower {
  constructor(
    private readonly store: EventStore,
    private readonly watcher: StreamWatcher,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  /** Resolves with the turn's ending (or the approval it waits for), or undefined once `signal` aborts (the turn goes on). */
  async follow(
    conversationId: string,
    turnId: string,
    after: number,
    onEvent: (e: StoredEvent<ConversationEvent>) => void,
    signal: AbortSignal,
  ): Promise<TurnEnding | undefined> {
    const streamId = conversationStreamId(conversationId);
    const wakeup = new Wakeup();
    const stopWatching = this.watcher.watch(streamId, () => wakeup.poke());
    const onAbort = () => wakeup.poke();
    signal.addEventListener('abort', onAbort);
    try {
      let cursor = after;
      while (!signal.aborted) {
        wakeup.reset();
        const events = await this.store.readStream<ConversationEvent>(streamId, { after: cursor, limit: 100 });
        for (const e of events) {
          cursor = e.version;
          if (e.type === 'ConversationErased' || e.type === 'ConversationDeleted') return { type: 'erased' };
          if (!('turnId' in e.data) || e.data.turnId !== turnId) continue;
          onEvent(e);
          if (TURN_ENDING_TYPES.includes(e.type) || e.type === 'ToolApprovalRequested') return e as TurnEnding;
        }
        if (events.length === 100) continue; // more to read at once
        await wakeup.wait(this.config.eventPollMs);
      }
      return undefined;
    } finally {
      stopWatching();
      signal.removeEventListener('abort', onAbort);
    }
  }
}
