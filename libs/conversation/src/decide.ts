import { EventMetadata, StoredEvent } from '@parley/event-store';
import { BatchItem, BatchLink, BatchVia, ConversationEvent, ConversationPolicy, ErasureSubject } from './events';
import { forkEvents } from './fork';
import { ConversationState, findTurn, fold, pendingTurns } from './state';

/**
 * An event a decision made: the handler gives it its id (unless it names one that must stay the
 * same whenever it is decided again, such as a stopped call's) and its metadata (merged under
 * what it carries of its own: a fork's copies keep their originals').
 */
export type DecidedEvent = ConversationEvent & { id?: string; metadata?: EventMetadata };

/** Commands are imperative; each names the user who issues it. */
export type ConversationCommand =
  | {
      type: 'StartConversation';
      userId: string;
      bookIds: string[];
      title: string | null;
      readingPosition: number | null;
    }
  /** a new conversation (this stream) whose history is the source's events 1..version */
  | {
      type: 'ForkConversation';
      userId: string;
      source: { conversationId: string; history: StoredEvent<ConversationEvent>[] };
      version: number;
      /**
       * The books of the source at `version` that the forking reader may read now, with their
       * titles: the fork's sources from then on (absent: all of them, as before 0.4).
       */
      readableBooks?: Array<{ id: string; title: string }>;
    }
  | { type: 'RenameConversation'; userId: string; title: string }
  | { type: 'ChangeReadingPosition'; userId: string; readingPosition: number | null }
  | { type: 'ChangePolicy'; userId: string; policy: PolicyPatch }
  | { type: 'ChangeSources'; userId: string; books: Array<{ id: string; title: string }> }
  | {
      type: 'PostUserMessage';
      userId: string;
      messageId: string;
      turnId: string;
      content: string;
      selectedText?: string;
      multitask: 'enqueue' | 'reject' | 'interrupt';
      batch?: BatchLink;
      /** the reader's monthly budget in force (UserMessagePosted.budgetUsdPerMonth) */
      budgetUsdPerMonth?: number;
      /** the catalogue the reader's token names (UserMessagePosted.catalogue) */
      catalogue?: string;
    }
  | {
      type: 'StartBatch';
      userId: string;
      batchId: string;
      mode: 'sequential' | 'independent';
      /** absent: 'messages' */
      via?: BatchVia;
      /** sequential: turns of this conversation, posted here in order; independent: turns already posted in forks */
      items: Array<BatchItem & { messageId: string }>;
      /** the reader's monthly budget in force, for the sequential prompts' UserMessagePosted */
      budgetUsdPerMonth?: number;
      /** the catalogue the reader's token names, for the sequential prompts' UserMessagePosted */
      catalogue?: string;
    }
  | { type: 'CompleteBatch'; userId: string; batchId: string; answered: number; failures: number }
  | { type: 'CancelTurn'; userId: string; turnId: string }
  /** the reader's answer to a tool call waiting for approval */
  | {
      type: 'DecideToolApproval';
      userId: string;
      turnId: string;
      toolCallId: string;
      approved: boolean;
      reason?: string;
    }
  /** the worker ending a turn that cannot go on; userId null: the system, on the owner's behalf */
  | { type: 'FailTurn'; userId: string | null; turnId: string; code: string; message: string; retryable: boolean }
  /** the system, after a withdrawn catalogue book's passages were taken out of this conversation's events */
  | { type: 'RecordPassagesWithdrawn'; userId: null; bookId: string; redactedEvents: number }
  /** userId null: the system erasing a conversation deleted by a release before erasure */
  | { type: 'EraseConversation'; userId: string | null; subject: ErasureSubject };

/** Every conversation command's type: the Record makes the compiler hold the list to the union. */
const CONVERSATION_COMMAND_TYPES = new Set<string>(
  Object.keys({
    StartConversation: true,
    ForkConversation: true,
    RenameConversation: true,
    ChangeReadingPosition: true,
    ChangePolicy: true,
    ChangeSources: true,
    PostUserMessage: true,
    StartBatch: true,
    CompleteBatch: true,
    CancelTurn: true,
    DecideToolApproval: true,
    FailTurn: true,
    RecordPassagesWithdrawn: true,
    EraseConversation: true,
  } satisfies Record<ConversationCommand['type'], true>),
);

/** Whether a command is one `decide` knows (a handler given no decider of its own decides only these). */
export const isConversationCommand = (command: { type: string }): command is ConversationCommand =>
  CONVERSATION_COMMAND_TYPES.has(command.type);

/** The commands a reader issues through the API (an erasure goes through the event store's eraseStream). */
export type ReaderCommand = Exclude<
  ConversationCommand,
  { type: 'EraseConversation' | 'FailTurn' | 'RecordPassagesWithdrawn' }
>;

/** A TurnFailed's message is cut to this many characters. */
export const FAILURE_MESSAGE_MAX_CHARS = 1000;

/** A change of policy: a field given sets it, null returns it to the server's default, absent keeps it. */
export type PolicyPatch = { [K in keyof ConversationPolicy]?: ConversationPolicy[K] | null };

/** The policy after a patch, its fields in a fixed order (so equal policies are equal JSON). */
export function patchedPolicy(policy: ConversationPolicy, patch: PolicyPatch): ConversationPolicy {
  const merged: Record<string, unknown> = { ...policy };
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) delete merged[field];
    else if (value !== undefined) merged[field] = value;
  }
  const fields: Array<keyof ConversationPolicy> = [
    'model',
    'maxIterations',
    'retrievalMode',
    'contextBudgetTokens',
    'instructions',
  ];
  return Object.fromEntries(
    fields.filter((f) => merged[f] !== undefined).map((f) => [f, merged[f]]),
  ) as ConversationPolicy;
}

/** Why a command cannot be carried out; the API maps each code to an HTTP status. */
export class DomainError extends Error {
  constructor(
    readonly code:
      | 'not_found'
      | 'already_exists'
      | 'turn_in_progress'
      | 'turn_not_found'
      | 'version_not_found'
      | 'approval_not_found'
      | 'approval_decided',
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/**
 * decide(command, state) → new events. Pure: ids and clock come in with the command.
 * A conversation another user owns is indistinguishable from a missing one (not_found).
 */
export function decide(command: ConversationCommand, state: ConversationState): DecidedEvent[] {
  if (command.type === 'StartConversation') {
    if (state.status !== 'none') throw new DomainError('already_exists', 'conversation already exists');
    const { userId, bookIds, title, readingPosition } = command;
    return [
      {
        type: 'ConversationStarted',
        data: { ownerId: userId, bookId: bookIds[0] ?? null, bookIds, title, readingPosition },
      },
    ];
  }
  if (command.type === 'ForkConversation') return forkConversation(command, state);
  if (command.type === 'EraseConversation') return eraseConversation(command, state);
  if (command.type === 'FailTurn') return failTurn(command, state);
  if (command.type === 'RecordPassagesWithdrawn') {
    // an erased conversation has nothing left to tell; a deleted one is erased by the sweep
    if (state.status !== 'active') return [];
    const { bookId, redactedEvents } = command;
    return [{ type: 'PassagesWithdrawn', data: { bookId, redactedEvents } }];
  }
  if (state.status !== 'active' || state.ownerId !== command.userId) {
    throw new DomainError('not_found', 'conversation not found');
  }
  switch (command.type) {
    case 'RenameConversation':
      return state.title === command.title ? [] : [{ type: 'ConversationRenamed', data: { title: command.title } }];
    case 'ChangeReadingPosition':
      return state.readingPosition === command.readingPosition
        ? []
        : [{ type: 'ReadingPositionChanged', data: { readingPosition: command.readingPosition } }];
    case 'StartBatch': {
      const { batchId, mode, via } = command;
      const items = command.items.map(({ prompt, turnId, conversationId }) => ({ prompt, turnId, conversationId }));
      const started: ConversationEvent = {
        type: 'BatchStarted',
        data: { batchId, mode, items, ...(via && via !== 'messages' ? { via } : {}) },
      };
      if (mode === 'independent') return [started];
      // sequential: the prompts are this conversation's next turns, queued in order behind any running one
      const batch = { batchId, conversationId: items[0]?.conversationId };
      return [
        started,
        ...command.items.map((i): ConversationEvent => ({
          type: 'UserMessagePosted',
          data: { messageId: i.messageId, turnId: i.turnId, content: i.prompt, batch, ...askedAs(command) },
        })),
      ];
    }
    case 'CompleteBatch': {
      const batch = state.batches[command.batchId];
      if (!batch || batch.completed) return [];
      const { batchId, answered, failures } = command;
      return [{ type: 'BatchCompleted', data: { batchId, answered, failures } }];
    }
    case 'ChangeSources': {
      const bookIds = command.books.map((b) => b.id);
      return JSON.stringify(bookIds) === JSON.stringify(state.bookIds)
        ? []
        : [{ type: 'SourcesChanged', data: { bookIds, books: command.books } }];
    }
    case 'ChangePolicy': {
      const policy = patchedPolicy(state.policy, command.policy);
      return JSON.stringify(policy) === JSON.stringify(patchedPolicy(state.policy, {}))
        ? []
        : [{ type: 'PolicyChanged', data: { policy } }];
    }
    case 'PostUserMessage': {
      const running = pendingTurns(state);
      if (running.length > 0 && command.multitask === 'reject') {
        throw new DomainError('turn_in_progress', `turn ${running[0].turnId} is still running`);
      }
      const { messageId, turnId, content, selectedText, batch } = command;
      const posted: ConversationEvent = {
        type: 'UserMessagePosted',
        data: {
          messageId,
          turnId,
          content,
          ...(selectedText !== undefined ? { selectedText } : {}),
          ...(batch ? { batch } : {}),
          ...askedAs(command),
        },
      };
      // interrupt: the pending turns end (TurnCancelled) before the new one is posted
      const cancelled: ConversationEvent[] =
        command.multitask === 'interrupt'
          ? running.map((t) => ({ type: 'TurnCancelled' as const, data: { turnId: t.turnId } }))
          : [];
      return [...cancelled, posted];
    }
    case 'CancelTurn': {
      const turn = findTurn(state, command.turnId);
      if (!turn) throw new DomainError('turn_not_found', 'turn not found');
      return turn.status === 'pending' ? [{ type: 'TurnCancelled', data: { turnId: turn.turnId } }] : [];
    }
    case 'DecideToolApproval': {
      const { turnId, toolCallId, approved, reason } = command;
      const turn = findTurn(state, turnId);
      const asked = turn?.approvals?.[toolCallId];
      if (!turn || !asked)
        throw new DomainError('approval_not_found', `turn ${turnId} asked no approval of call ${toolCallId}`);
      if (asked !== 'requested') throw new DomainError('approval_decided', `call ${toolCallId} was ${asked} already`);
      if (turn.status !== 'pending')
        throw new DomainError('approval_decided', `turn ${turnId} has ended: its calls wait for nothing`);
      return [
        {
          type: 'ToolApprovalDecided',
          data: { turnId, toolCallId, approved, ...(reason ? { reason } : {}), by: 'reader' },
        },
      ];
    }
    default: {
      const unhandled: never = command;
      throw new Error(`unhandled command ${(unhandled as { type: string }).type}`);
    }
  }
}

/** What a post records of its reader when they asked: the budget in force and their catalogue, when known. */
const askedAs = ({ budgetUsdPerMonth, catalogue }: { budgetUsdPerMonth?: number; catalogue?: string }) => ({
  ...(budgetUsdPerMonth !== undefined ? { budgetUsdPerMonth } : {}),
  ...(catalogue !== undefined ? { catalogue } : {}),
});

/** A fork is a new stream, of a source its reader may see, at a version the source has. */
function forkConversation(
  command: Extract<ConversationCommand, { type: 'ForkConversation' }>,
  state: ConversationState,
): DecidedEvent[] {
  if (state.status !== 'none') throw new DomainError('already_exists', 'conversation already exists');
  const { source, version, userId } = command;
  assertVisible(fold(source.history), userId);
  if (version < 1 || version > source.history.length)
    throw new DomainError('version_not_found', `the conversation has no version ${version}`);
  return forkEvents(source, version, { userId }, command.readableBooks);
}

/**
 * The owner's conversation, or one a release before erasure deleted, ends as its tombstone
 * (the event store then deletes everything before it). Nothing to erase is not_found.
 */
function eraseConversation(
  command: Extract<ConversationCommand, { type: 'EraseConversation' }>,
  state: ConversationState,
): ConversationEvent[] {
  const erasable = state.status === 'active' || state.status === 'deleted';
  const allowed = command.userId === null ? state.status === 'deleted' : state.ownerId === command.userId;
  if (!erasable || !allowed) throw new DomainError('not_found', 'conversation not found');
  return [{ type: 'ConversationErased', data: { erasedEvents: state.version, subject: command.subject } }];
}

/**
 * TurnFailed for a turn still pending; nothing for one that ended already (replied, cancelled,
 * failed by another worker) or a conversation that has no such turn (erased). The system's
 * command: it answers for any conversation the turn is in, as the worker always has.
 */
function failTurn(
  command: Extract<ConversationCommand, { type: 'FailTurn' }>,
  state: ConversationState,
): ConversationEvent[] {
  if (findTurn(state, command.turnId)?.status !== 'pending') return [];
  const { turnId, code, message, retryable } = command;
  return [
    { type: 'TurnFailed', data: { turnId, code, message: message.slice(0, FAILURE_MESSAGE_MAX_CHARS), retryable } },
  ];
}

/** A conversation its reader may see: theirs, and neither deleted nor erased. Anything else is not_found. */
export function assertVisible(state: ConversationState, userId: string): void {
  if (state.status !== 'active' || state.ownerId !== userId)
    throw new DomainError('not_found', 'conversation not found');
}
