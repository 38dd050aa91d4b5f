import { ConversationEvent, ConversationState, conversationStreamId, evolve, initialState } from '@parley/conversation';
import { EventStore, FoldSnapshots, SNAPSHOT_SPAN_EVENTS, StoredEvent, StreamFoldCache } from '@parley/event-store';

/** A conversation as GET /conversations/:id shows it: the folded state plus its id and times. */
export type ConversationView = { id: string } & Pick<
  ConversationState,
  'bookId' | 'bookIds' | 'title' | 'readingPosition' | 'forkedFrom' | 'policy' | 'version' | 'messageCount' | 'turns'
> & { createdAt: string | null; lastActivityAt: string | null };

/** What a conversation's view needs: the decision state and when it began and last moved. */
export interface FoldedConversation {
  state: ConversationState;
  createdAt?: Date;
  lastActivityAt?: Date;
}

/** A conversation as a command is decided on it: its fold at a version. */
export type LoadedConversation = FoldedConversation & { version: number };

/** What the API keeps of a conversation; a new replica starts a long one from its latest snapshot. */
const conversationStateFold = {
  // raise the version with any change to what evolve keeps: older snapshots are then not read
  snapshots: { id: 'api-conversation/v1', every: SNAPSHOT_SPAN_EVENTS },
  initial: (): FoldedConversation => ({ state: initialState() }),
  evolve: (f: FoldedConversation, e: StoredEvent<ConversationEvent>): FoldedConversation => ({
    state: evolve(f.state, e),
    createdAt: f.createdAt ?? e.occurredAt,
    lastActivityAt: e.occurredAt,
  }),
};

/**
 * Each conversation's state, kept between requests: a post or a read of the conversation reads
 * only the events appended since the last, not the whole conversation. Small per conversation
 * (no message text), so many are kept. The source the API's commands are decided on.
 */
export class ApiConversationFolds {
  private readonly cache: StreamFoldCache<ConversationEvent, FoldedConversation>;

  constructor(store: EventStore) {
    this.cache = new StreamFoldCache(store, conversationStateFold, 10_000, new FoldSnapshots(store.pool));
  }

  async load(conversationId: string): Promise<LoadedConversation> {
    const { version, state } = await this.cache.load(conversationStreamId(conversationId));
    return { version, ...state };
  }
}

export function toView(id: string, { state, createdAt, lastActivityAt }: FoldedConversation): ConversationView {
  return {
    id,
    bookId: state.bookId,
    bookIds: state.bookIds,
    title: state.title,
    readingPosition: state.readingPosition,
    forkedFrom: state.forkedFrom,
    policy: state.policy,
    version: state.version,
    messageCount: state.messageCount,
    turns: state.turns,
    createdAt: createdAt?.toISOString() ?? null,
    lastActivityAt: lastActivityAt?.toISOString() ?? null,
  };
}
