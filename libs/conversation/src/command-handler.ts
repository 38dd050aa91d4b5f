import { randomUUID } from 'node:crypto';
import {
  EventMetadata,
  ExpectedVersion,
  NewEvent,
  StoredEvent,
  traceMetadata,
  WrongExpectedVersionError,
} from '@parley/event-store';
import { ConversationCommand, decide, DecidedEvent, DomainError, isConversationCommand } from './decide';
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

/** What a write of decided events answers: at least the events as stored. */
export interface Appended {
  events: StoredEvent<ConversationEvent>[];
}

/**
 * Where the handler writes the decided events: all of them at the expected version, or none and a
 * WrongExpectedVersionError. The EventStore's append, or a write that does more in the same
 * transaction (the eraser's eraseStream).
 */
export interface CommandStore<A extends Appended = Appended> {
  append(
    streamId: string,
    events: NewEvent<ConversationEvent>[],
    opts: { expectedVersion: ExpectedVersion },
  ): Promise<A>;
}

/**
 * Where the handler loads a conversation from: the caller's own fold cache (the API's, a
 * worker's), or the log. `kept`, when the source keeps the conversation in memory, answers it
 * without reading: it may be behind the log, so the handler decides on it first, and an append on
 * it that loses the race, or a refusal on it (a DomainError, an If-Match that differs, nothing to
 * do), is decided again on a loaded one, as the log may have moved past what refused. `appended`
 * is told of each append the handler makes, so a cache folds in its own process's events.
 */
export interface ConversationFoldSource<F extends FoldedForCommands> {
  load(conversationId: string): Promise<F>;
  kept?(conversationId: string): F | undefined;
  appended?(conversationId: string, events: StoredEvent<ConversationEvent>[]): void;
}

/** What a decided event's metadata is made from. */
export interface DecidedOn {
  /** the command's user, or the owner's for a system command */
  userId: string | null;
  folded: FoldedForCommands;
  correlationId?: string;
}

/** The metadata every event decided in one call carries. */
export type MetadataPolicy = (decidedOn: DecidedOn) => EventMetadata;

/** The events a batch of commands makes on the conversation as folded: [] when they no longer apply. */
export type Decider<C, F> = (commands: C[], folded: F) => DecidedEvent[];

/** What every command names: the user who issues it (absent or null: the system, for the owner). */
export interface Command {
  type: string;
  userId?: string | null;
}

export interface CommandOptions<F = FoldedForCommands, C extends Command = ConversationCommand> {
  /** the decision (default: the reader's commands, decided by decide() on the state) */
  decide?: Decider<C, F>;
  /** If-Match: the version the client saw; another one is a conflict, never retried */
  ifMatch?: number;
  /** the id of each decided event (derived from an Idempotency-Key); random otherwise */
  eventId?: (event: ConversationEvent) => string;
  /** the turn or batch the events belong to */
  correlationId?: string;
  /** how often a lost race is decided again on the new state (default 8; from the second, after a pause) */
  retries?: number;
  /** the events' metadata (default: commandMetadata) */
  metadata?: MetadataPolicy;
  /**
   * The fold to decide on first, in place of the source's kept one unless that one is further
   * along: the one the caller planned its work on. Like a kept fold it may be behind the log, and
   * is treated the same way.
   */
  decideFirstOn?: F;
  /** Told of the events about to be appended, as stamped, on each try (before the append goes out). */
  beforeAppend?(events: NewEvent<ConversationEvent>[]): void;
}

export interface CommandResult<F, A extends Appended = Appended> {
  /** the events as stored; none when the commands changed nothing */
  events: StoredEvent<ConversationEvent>[];
  /** the conversation the commands were decided on */
  folded: F;
  /** the store's answer to the append; undefined when nothing was appended */
  appended?: A;
}

const DEFAULT_RETRIES = 8;

/** A pause before the next try after `attempt` + 1 lost races: jittered, 1, 2, 4 … up to 32 ms at most. */
export const retryPauseMs = (attempt: number): number => Math.random() * Math.min(32, 2 ** attempt);

/**
 * The one command path (Emmett's CommandHandler): load the conversation's fold, decide every
 * command on the same state, stamp the events' metadata, append them atomically at the folded
 * version, and tell the source what was appended. A lost race (another writer appended first)
 * is decided again on the new state, unless the caller gave If-Match: then it is the client's 409.
 */
export async function handleCommand<
  F extends FoldedForCommands,
  A extends Appended = Appended,
  C extends Command = ConversationCommand,
>(
  store: CommandStore<A>,
  folds: ConversationFoldSource<F>,
  conversationId: string,
  commands: C[],
  opts: CommandOptions<F, C> = {},
): Promise<CommandResult<F, A>> {
  const streamId = conversationStreamId(conversationId);
  const retries = opts.retries ?? DEFAULT_RETRIES;
  const metadataOf = opts.metadata ?? commandMetadata;
  const decideOn: Decider<C, F> = opts.decide ?? decideConversationCommands;
  for (let attempt = 0; ; attempt++) {
    const unread = attempt === 0 ? furthest(opts.decideFirstOn, folds.kept?.(conversationId)) : undefined;
    const folded = unread ?? (await folds.load(conversationId));
    const { state } = folded;
    let decided: DecidedEvent[];
    try {
      if (opts.ifMatch !== undefined && state.version !== opts.ifMatch)
        throw staleIfMatch(streamId, decideOn, commands, folded, opts.ifMatch);
      decided = decideOn(commands, folded);
    } catch (e) {
      if (unread) continue; // refused on what may be behind: decide again on what the log says
      throw e;
    }
    if (decided.length === 0) {
      if (unread) continue; // nothing to do, as far as the kept state knows: the log may say otherwise
      return { events: [], folded };
    }
    const metadata = metadataOf({
      userId: commands[0]?.userId ?? state.ownerId,
      folded,
      correlationId: opts.correlationId,
    });
    const events = stamped(decided, metadata, opts.eventId);
    opts.beforeAppend?.(events);
    const expectedVersion: ExpectedVersion = state.status === 'none' ? 'no_stream' : folded.version;
    try {
      const appended = await store.append(streamId, events, { expectedVersion });
      folds.appended?.(conversationId, appended.events);
      return { events: appended.events, folded, appended };
    } catch (e) {
      const retry = e instanceof WrongExpectedVersionError && opts.ifMatch === undefined && attempt < retries;
      if (!retry) throw e;
      // lost twice: another writer is appending fast (a worker through a queue of turns); step aside
      if (attempt > 0) await new Promise((r) => setTimeout(r, retryPauseMs(attempt)));
    }
  }
}

/**
 * Of the fold a caller planned on and the one its source keeps (which may have heard of later
 * appends), the one further along: deciding on it is what a lost race's retry would do, without
 * losing the race first.
 */
function furthest<F extends FoldedForCommands>(planned: F | undefined, kept: F | undefined): F | undefined {
  if (!planned || !kept) return planned ?? kept;
  return kept.version > planned.version ? kept : planned;
}

/** Decided events as they are appended: each with its id and the metadata of the decision. */
export function stamped(
  decided: DecidedEvent[],
  metadata: EventMetadata,
  eventId?: (event: ConversationEvent) => string,
): NewEvent<ConversationEvent>[] {
  return decided.map(({ id, metadata: own, ...e }) => ({
    ...(e as ConversationEvent),
    id: id ?? eventId?.(e as ConversationEvent) ?? randomUUID(),
    metadata: own ? { ...metadata, ...own } : metadata,
  }));
}

/** The default decision: conversation commands, by decide() on the state; any other command is a caller's mistake. */
function decideConversationCommands(commands: Command[], folded: FoldedForCommands): DecidedEvent[] {
  const known = commands.map((c) => {
    if (!isConversationCommand(c)) throw new Error(`no decider was given for command ${c.type}`);
    return c;
  });
  return decideAll(known, folded.state);
}

/** Every command decided on the state the ones before it left. */
export function decideAll(commands: ConversationCommand[], state: ConversationState): DecidedEvent[] {
  let s = state;
  const decided: DecidedEvent[] = [];
  for (const command of commands) {
    for (const event of decide(command, s)) {
      decided.push(event);
      s = evolve(s, event);
    }
  }
  return decided;
}

/**
 * The default metadata: `userId`, `correlationId` when given, `causationId` when the fold keeps
 * its last event, and `traceparent`, the span it was written under, so a turn's later work joins
 * its trace.
 */
export const commandMetadata: MetadataPolicy = ({ userId, folded, correlationId }) => ({
  ...(userId ? { userId } : {}),
  ...(correlationId ? { correlationId } : {}),
  ...(folded.lastEventId ? { causationId: folded.lastEventId } : {}),
  ...traceMetadata(),
});

/**
 * If-Match named another version than the conversation's: a conflict, unless the commands find
 * nothing of the caller's there (not_found first: a stranger never learns the conversation exists).
 */
function staleIfMatch<C, F extends FoldedForCommands>(
  streamId: string,
  decideOn: Decider<C, F>,
  commands: C[],
  folded: F,
  ifMatch: number,
): Error {
  try {
    decideOn(commands, folded);
  } catch (e) {
    if (e instanceof DomainError && e.code === 'not_found') return e;
  }
  return new WrongExpectedVersionError(streamId, ifMatch, folded.state.version);
}
