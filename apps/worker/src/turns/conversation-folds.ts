import { Inject, Injectable } from '@nestjs/common';
import {
  evolveTurns,
  LLM_CLIENT,
  sourcesNote,
  LlmClient,
  ToolContext,
  TurnDefaults,
  TurnRecord,
  TurnSettings,
  turnSettings,
  turnsStillNeeded,
  usesAlwaysRetrieve,
} from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import {
  ConversationEvent,
  ConversationState,
  conversationStreamId,
  evolve,
  initialState,
  startedBookIds,
} from '@parley/conversation';
import {
  EventStore,
  FoldSnapshots,
  SNAPSHOT_SPAN_EVENTS,
  StoredEvent,
  StreamFold,
  StreamFoldCache,
} from '@parley/event-store';

/** What a worker needs of a conversation to run its turns: the decision state and the turns. */
export interface ConversationFold {
  state: ConversationState;
  /** the turns still needed: those not ended and the ended ones a history can still reach */
  turns: TurnRecord[];
  /** the last event, which a turn's next event follows from (causation) */
  lastEventId: string | undefined;
  /** the first book the conversation started with: the system prompt names it, so it never moves */
  startedBookId: string | null;
  /** the books' note for the next question, after a SourcesChanged */
  pendingSourcesNote?: string;
}

/**
 * The version of the fold below, in its snapshots' name: raise it with any change to what `evolve`
 * or `compact` keep (here, in evolveTurns or in turnsStillNeeded), and the snapshots taken by
 * earlier builds are no longer read.
 */
export const WORKER_FOLD_VERSION = 1;

/**
 * The fold a worker keeps: the turns since the latest cut of the history (`turnsStillNeeded`),
 * ended ones only as the messages histories send of them (without tool exchanges as well only
 * for a worker that sends such histories: the always-retrieve plan).
 */
export const conversationTurnsFold = (
  historiesWithoutTools = true,
  snapshotEvery = SNAPSHOT_SPAN_EVENTS,
): StreamFold<ConversationEvent, ConversationFold> => ({
  snapshots: {
    id: `worker-conversation/v${WORKER_FOLD_VERSION}${historiesWithoutTools ? '/without-tools' : ''}`,
    every: snapshotEvery,
  },
  initial: () => ({ state: initialState(), turns: [], lastEventId: undefined, startedBookId: null }),
  // an erased conversation's tombstone leaves nothing of it in memory either
  evolve: (f, e: StoredEvent<ConversationEvent>) =>
    e.type === 'ConversationErased'
      ? erasedFold(f, e)
      : {
          state: evolve(f.state, e),
          // a turn runs by the policy in force when it was posted; a change of books is told with the next question
          turns: evolveTurns(f.turns, e, { policy: f.state.policy, sourcesNote: f.pendingSourcesNote }),
          lastEventId: e.id,
          startedBookId: e.type === 'ConversationStarted' ? (startedBookIds(e.data)[0] ?? null) : f.startedBookId,
          pendingSourcesNote:
            e.type === 'SourcesChanged'
              ? sourcesNote(e.data.books)
              : e.type === 'UserMessagePosted'
                ? undefined
                : f.pendingSourcesNote,
        },
  // a withdrawn book's passages were taken out of earlier events: the turns kept here still hold them
  foldsAnewAfter: (e) => e.type === 'PassagesWithdrawn',
  compact: (f) => {
    const turns = turnsStillNeeded(f.turns, { historiesWithoutTools });
    return turns === f.turns ? f : { ...f, turns };
  },
});

const erasedFold = (f: ConversationFold, e: StoredEvent<ConversationEvent>): ConversationFold => ({
  state: evolve(f.state, e),
  turns: [],
  lastEventId: e.id,
  startedBookId: null,
});

/** Conversations this worker has folded, caught up from the log on each load. */
@Injectable()
export class ConversationFolds {
  private readonly cache: StreamFoldCache<ConversationEvent, ConversationFold>;

  constructor(
    store: EventStore,
    @Inject(CONFIG) config: Pick<AppConfig, 'agent' | 'llm'>,
    @Inject(LLM_CLIENT) llm: Pick<LlmClient, 'everyModelTakesTools'>,
  ) {
    const historiesWithoutTools = usesAlwaysRetrieve(config.llm.retrievalMode, llm.everyModelTakesTools);
    this.cache = new StreamFoldCache(
      store,
      conversationTurnsFold(historiesWithoutTools),
      undefined,
      new FoldSnapshots(store.pool),
    );
  }

  async load(conversationId: string): Promise<FoldedConversation> {
    const { version, state } = await this.cache.load(conversationStreamId(conversationId));
    return { version, ...state };
  }

  /** The conversation as this worker last folded it, without reading (it may be behind the log). */
  kept(conversationId: string): FoldedConversation | undefined {
    const kept = this.cache.kept(conversationStreamId(conversationId));
    return kept && { version: kept.version, ...kept.state };
  }

  /** The conversation after this worker's own append, from memory (StreamFoldCache.appended). */
  appended(conversationId: string, events: StoredEvent<ConversationEvent>[]): FoldedConversation | undefined {
    const folded = this.cache.appended(conversationStreamId(conversationId), events);
    return folded && { version: folded.version, ...folded.state };
  }
}

export type FoldedConversation = { version: number } & ConversationFold;

/** A turn as the log says it stands: the conversation folded, and the turn among its turns. */
export interface LoadedTurn {
  version: number;
  turns: TurnRecord[];
  turn: TurnRecord | undefined;
  ownerId: string | null;
  lastEventId: string | undefined;
  ctx: ToolContext;
  deleted: boolean;
  /** erased: nothing of the conversation is left, and nothing more may be appended */
  erased: boolean;
  /** the book the system prompt names: the first the conversation started with */
  startedBookId: string | null;
  /** what the turn runs by: the conversation's policy when it was posted, the server's configuration for the rest */
  settings: TurnSettings;
}

/** The turn within a folded conversation. */
export function turnOf(
  { version, state, turns, lastEventId, startedBookId }: FoldedConversation,
  conversationId: string,
  turnId: string,
  signal: AbortSignal,
  defaults: TurnDefaults,
): LoadedTurn {
  const turn = turns.find((t) => t.turnId === turnId);
  return {
    version,
    turns,
    turn,
    ownerId: state.ownerId,
    lastEventId,
    deleted: state.status !== 'active',
    erased: state.status === 'erased',
    startedBookId,
    settings: turnSettings(turn?.policy, defaults),
    ctx: {
      userId: state.ownerId ?? '',
      catalogue: turn?.catalogue ?? null,
      conversationId,
      bookId: state.bookId,
      bookIds: state.bookIds,
      readingPosition: state.readingPosition,
      signal,
    },
  };
}
