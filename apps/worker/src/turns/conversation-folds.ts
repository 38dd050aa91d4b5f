import { Inject, Injectable, OnModuleDestroy, Optional } from '@nestjs/common';
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
  ConversationFoldSource,
  conversationIdOf,
  ConversationState,
  conversationStreamId,
  evolve,
  initialState,
  startedBookIds,
} from '@parley/conversation';
import {
  Announcement,
  AppendNotifier,
  EventStore,
  FoldedStream,
  FoldSnapshots,
  SNAPSHOT_SPAN_EVENTS,
  StoredEvent,
  StreamFold,
  StreamFoldCache,
} from '@parley/event-store';

/**
 * A conversation as this worker folds it, at a version: the decision state and the turns. The
 * one name for it on the worker's side (the variable: `folded`).
 */
export interface FoldedConversation {
  /** the version of its last event folded in (0: no stream) */
  version: number;
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

/** What the stream fold keeps (the cache knows the version). */
type Kept = Omit<FoldedConversation, 'version'>;

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
): StreamFold<ConversationEvent, Kept> => ({
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

const erasedFold = (f: Kept, e: StoredEvent<ConversationEvent>): Kept => ({
  state: evolve(f.state, e),
  turns: [],
  lastEventId: e.id,
  startedBookId: null,
});

/**
 * The worker's one fold of each conversation (a StreamFoldCache): every load, read ahead and own
 * append goes through it, for the turns' processor and runner and for the commands they hand to
 * handleCommand (its fold source). What the announcements of other processes' appends bring is
 * folded into the conversations kept, so a turn's next event is decided on the question posted
 * meanwhile instead of losing the race to it and reading it back.
 */
@Injectable()
export class ConversationFolds implements ConversationFoldSource<FoldedConversation>, OnModuleDestroy {
  private readonly cache: StreamFoldCache<ConversationEvent, Kept>;

  constructor(
    store: EventStore,
    @Inject(CONFIG) config: Pick<AppConfig, 'agent' | 'llm'>,
    @Inject(LLM_CLIENT) llm: Pick<LlmClient, 'everyModelTakesTools'>,
    @Optional() private readonly notifier?: AppendNotifier,
  ) {
    const historiesWithoutTools = usesAlwaysRetrieve(config.llm.retrievalMode, llm.everyModelTakesTools);
    this.cache = new StreamFoldCache(
      store,
      conversationTurnsFold(historiesWithoutTools),
      undefined,
      new FoldSnapshots(store.pool),
    );
    notifier?.on('append', this.heard);
  }

  onModuleDestroy(): void {
    this.notifier?.off('append', this.heard);
  }

  /** An append announced with its events: folded into the conversation if kept and they follow it. */
  private readonly heard = (announced: Announcement): void => {
    const { streamId, version } = announced;
    if (!conversationIdOf(streamId)) return;
    const kept = this.cache.kept(streamId);
    if (!kept || (version !== undefined && version <= kept.version)) return; // not kept, or had it (its own append)
    const fresh = announced.events?.filter((e) => e.version > kept.version) as
      StoredEvent<ConversationEvent>[] | undefined;
    if (fresh && fresh.length > 0) this.cache.appended(streamId, fresh);
  };

  /** The conversation as the log has it now (the events since the fold kept are read). */
  async load(conversationId: string): Promise<FoldedConversation> {
    return withVersion(await this.cache.load(conversationStreamId(conversationId)));
  }

  /** Begins a load now, for `latest` to answer from: a job of the conversation was just taken. */
  readAhead(conversationId: string): void {
    this.load(conversationId).catch(() => undefined); // `latest` reads again after a read that failed
  }

  /**
   * The conversation as of the latest load begun (waited for while under way) and this worker's
   * appends since, without a read of its own (StreamFoldCache.latest): for a caller that knows a
   * load began after the moment it cares about (its job was taken, it appended).
   */
  async latest(conversationId: string): Promise<FoldedConversation> {
    return withVersion(await this.cache.latest(conversationStreamId(conversationId)));
  }

  /** The conversation as this worker last folded it, without reading (it may be behind the log). */
  kept(conversationId: string): FoldedConversation | undefined {
    const kept = this.cache.kept(conversationStreamId(conversationId));
    return kept && withVersion(kept);
  }

  /** This worker's own append (handleCommand tells it), folded in from memory (StreamFoldCache.appended). */
  appended(conversationId: string, events: StoredEvent<ConversationEvent>[]): void {
    if (events.length > 0) this.cache.appended(conversationStreamId(conversationId), events);
  }
}

const withVersion = ({ version, state }: FoldedStream<Kept>): FoldedConversation => ({ version, ...state });

/**
 * A turn as its steps see it: the turn itself, its conversation as folded, what its tools run
 * with, and what it runs by (the conversation's policy when it was posted, the server's
 * configuration for the rest). The one name for it (the variable: `view`).
 */
export interface TurnView {
  turn: TurnRecord;
  folded: FoldedConversation;
  ctx: ToolContext;
  settings: TurnSettings;
}

/** The turn in the folded conversation, as its steps see it; undefined when the fold holds no such turn. */
export function turnViewOf(
  folded: FoldedConversation,
  conversationId: string,
  turnId: string,
  signal: AbortSignal,
  defaults: TurnDefaults,
): TurnView | undefined {
  const turn = folded.turns.find((t) => t.turnId === turnId);
  if (!turn) return undefined;
  const { state } = folded;
  return {
    turn,
    folded,
    settings: turnSettings(turn.policy, defaults),
    ctx: {
      userId: state.ownerId ?? '',
      catalogue: turn.catalogue ?? null,
      conversationId,
      bookId: state.bookId,
      bookIds: state.bookIds,
      readingPosition: state.readingPosition,
      signal,
    },
  };
}
