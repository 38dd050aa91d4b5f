import { Injectable, OnModuleDestroy, Optional } from '@nestjs/common';
import {
  ConversationEvent,
  ConversationFoldSource,
  conversationIdOf,
  ConversationState,
  conversationStreamId,
  evolve,
  initialState,
} from '@parley/conversation';
import {
  Announcement,
  AppendNotifier,
  EventStore,
  FoldSnapshots,
  SNAPSHOT_SPAN_EVENTS,
  StoredEvent,
  StreamFoldCache,
} from '@parley/event-store';

/**
 * A conversation as the API folds it, at a version: the decision state, and when it began and
 * last moved (for its view). The one name for it on the API's side (the variable: `folded`).
 */
export interface FoldedConversation {
  version: number;
  state: ConversationState;
  createdAt?: Date;
  lastActivityAt?: Date;
}

/** What the stream fold keeps (the cache knows the version). */
type Kept = Omit<FoldedConversation, 'version'>;

/** What the API keeps of a conversation; a new replica starts a long one from its latest snapshot. */
const conversationStateFold = {
  // raise the version with any change to what evolve keeps: older snapshots are then not read
  snapshots: { id: 'api-conversation/v1', every: SNAPSHOT_SPAN_EVENTS },
  initial: (): Kept => ({ state: initialState() }),
  evolve: (f: Kept, e: StoredEvent<ConversationEvent>): Kept => ({
    state: evolve(f.state, e),
    createdAt: f.createdAt ?? e.occurredAt,
    lastActivityAt: e.occurredAt,
  }),
};

/** How many conversations an API process keeps folded. */
const KEPT_CONVERSATIONS = 10_000;

/**
 * Each conversation's state, kept between requests: a post or a read of the conversation reads
 * only the events appended since the last, not the whole conversation. Small per conversation
 * (no message text), so many are kept. The source the API's commands are decided on. What the
 * announcements of appends bring (any process's) is folded in as it comes, so a post can be
 * decided on the kept state without reading (`kept`); one the announcements left behind (one
 * came without its events, or after a gap) is read again by the next command.
 */
@Injectable()
export class ApiConversationFolds implements ConversationFoldSource<FoldedConversation>, OnModuleDestroy {
  private readonly cache: StreamFoldCache<ConversationEvent, Kept>;
  /**
   * The version an announcement without its events said a kept conversation reached (Infinity:
   * it did not say): the kept fold is not trusted until it has caught up (a read, its own append).
   */
  private readonly announcedPast = new Map<string, number>();

  constructor(
    store: EventStore,
    snapshots: FoldSnapshots,
    @Optional() private readonly notifier?: AppendNotifier,
  ) {
    this.cache = new StreamFoldCache(store, conversationStateFold, KEPT_CONVERSATIONS, snapshots);
    notifier?.on('append', this.heard);
  }

  onModuleDestroy(): void {
    this.notifier?.off('append', this.heard);
  }

  async load(conversationId: string): Promise<FoldedConversation> {
    const streamId = conversationStreamId(conversationId);
    this.announcedPast.delete(streamId); // an announcement during the read marks it again
    const { version, state } = await this.cache.load(streamId);
    return { version, ...state };
  }

  /**
   * The conversation as kept, without reading: as current as the announcements heard so far, so
   * possibly behind the log (an append on it then fails at its version). Undefined when not kept.
   */
  kept(conversationId: string): FoldedConversation | undefined {
    const streamId = conversationStreamId(conversationId);
    const kept = this.cache.kept(streamId);
    if (!kept || kept.version < (this.announcedPast.get(streamId) ?? 0)) return undefined;
    return { version: kept.version, ...kept.state };
  }

  /** Events this process appended to the conversation (handleCommand tells it): folded in at once, for its next command. */
  appended(conversationId: string, events: StoredEvent<ConversationEvent>[]): void {
    if (events.length > 0) this.cache.appended(conversationStreamId(conversationId), events);
  }

  /** An append announced (AppendNotifier's 'append'): its events folded into a kept conversation. */
  readonly heard = (announced: Announcement): void => {
    const { streamId, version } = announced;
    if (!conversationIdOf(streamId)) return;
    const kept = this.cache.kept(streamId);
    if (!kept || (version !== undefined && version <= kept.version)) return; // has it already (its own append)
    const events = announced.events; // parsed only now: most announcements are of conversations not kept here
    const fresh = events?.filter((e) => e.version > kept.version) as StoredEvent<ConversationEvent>[] | undefined;
    if (fresh && fresh.length > 0 && this.cache.appended(streamId, fresh)) return;
    this.announcedPast.set(streamId, Math.max(version ?? Infinity, this.announcedPast.get(streamId) ?? 0));
    // no more than the cache keeps: the oldest entry may be of a conversation it let go
    if (this.announcedPast.size > KEPT_CONVERSATIONS)
      this.announcedPast.delete(this.announcedPast.keys().next().value!);
  };
}
