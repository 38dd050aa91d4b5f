import { randomUUID } from 'node:crypto';
import {
  EventMetadata,
  ExpectedVersion,
  NewEvent,
  StoredEvent,
  traceMetadata,
  WrongExpectedVersionError,
} from '@parley/event-store';
import { assertVisible, ConversationCommand, decide } from './decide';
import { ConversationEvent, conversationStreamId } from './events';
import { ConversationState, evolve } from './state';

/**
 * A conversation as a caller keeps it folded: its version and decision state, and (in a fold
 * that keeps it) its last event, which the events decided on it follow from (causation).
 */
export interface FoldedForCommands {
  version: number;
  state: ConversationState;
  lastEventId?: string;
}

/** Where the handler appends: the EventStore (its append at an expected version). */
export interface CommandStore {
  append(
    streamId: string,
    events: NewEvent<ConversationEvent>[],
    opts: { expectedVersion: ExpectedVersion },
  ): Promise<{ events: StoredEvent<ConversationEvent>[] }>;
}

/** Where the handler loads a conversation from: the caller's own fold cache (the API's, a worker's). */
export interface ConversationFoldSource<F extends FoldedForCommands> {
  load(conversationId: string): Promise<F>;
}

export interface CommandOptions {
  /** If-Match: the version the client saw; another one is a conflict, never retried */
  ifMatch?: number;
  /** the id of each decided event (derived from an Idempotency-Key); random otherwise */
  eventId?: (event: ConversationEvent) => string;
  /** the turn or batch the events belong to */
  correlationId?: string;
  /** how often a lost race is decided again on the new state (default 5) */
  retries?: number;
}

export interface CommandResult<F> {
  /** the events as stored; none when the commands changed nothing */
  events: StoredEvent<ConversationEvent>[];
  /** the conversation the commands were decided on */
  folded: F;
}

const DEFAULT_RETRIES = 5;

/**
 * The one command path (Emmett's CommandHandler): load the conversation's fold, decide every
 * command on the same state, stamp the events' metadata, append them atomically at the folded
 * version. A lost race (another writer appended first) is decided again on the new state,
 * unless the caller gave If-Match: then it is the client's 409.
 *
 * Metadata, the same on every event decided here: `userId` (the command's, or the owner's for a
 * system command), `correlationId` when given, `causationId` when the fold keeps its last event,
 * and `traceparent`, the span it was written under, so a turn's later work joins its trace.
 */
export async function handleCommand<F extends FoldedForCommands>(
  store: CommandStore,
  folds: ConversationFoldSource<F>,
  conversationId: string,
  commands: ConversationCommand[],
  opts: CommandOptions = {},
): Promise<CommandResult<F>> {
  const streamId = conversationStreamId(conversationId);
  const retries = opts.retries ?? DEFAULT_RETRIES;
  for (let attempt = 0; ; attempt++) {
    const folded = await folds.load(conversationId);
    const { state } = folded;
    if (opts.ifMatch !== undefined && state.status === 'active' && state.version !== opts.ifMatch) {
      const userId = commands[0]?.userId;
      if (userId && commands.every((c) => c.type !== 'StartConversation')) assertVisible(state, userId);
      throw new WrongExpectedVersionError(streamId, opts.ifMatch, state.version);
    }
    const decided = decideAll(commands, state);
    if (decided.length === 0) return { events: [], folded };
    const metadata = metadataOf(commands[0].userId ?? state.ownerId, folded, opts.correlationId);
    const events: NewEvent<ConversationEvent>[] = decided.map((e) => ({
      ...e,
      id: opts.eventId?.(e) ?? randomUUID(),
      metadata,
    }));
    const expectedVersion: ExpectedVersion = state.status === 'none' ? 'no_stream' : folded.version;
    try {
      return { events: (await store.append(streamId, events, { expectedVersion })).events, folded };
    } catch (e) {
      const retry = e instanceof WrongExpectedVersionError && opts.ifMatch === undefined && attempt < retries;
      if (!retry) throw e;
    }
  }
}

/** Every command decided on the state the ones before it left. */
export function decideAll(commands: ConversationCommand[], state: ConversationState): ConversationEvent[] {
  let s = state;
  const decided: ConversationEvent[] = [];
  for (const command of commands) {
    for (const event of decide(command, s)) {
      decided.push(event);
      s = evolve(s, event);
    }
  }
  return decided;
}

/** The one place a decided event's metadata is made. */
function metadataOf(
  userId: string | null,
  folded: FoldedForCommands,
  correlationId: string | undefined,
): EventMetadata {
  return {
    ...(userId ? { userId } : {}),
    ...(correlationId ? { correlationId } : {}),
    ...(folded.lastEventId ? { causationId: folded.lastEventId } : {}),
    ...traceMetadata(),
  };
}
