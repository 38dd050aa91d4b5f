import { ConversationEvent } from './events';
import { ConversationState, findTurn, pendingTurns } from './state';

/** Commands are imperative; each names the user who issues it. */
export type ConversationCommand =
  | {
      type: 'StartConversation';
      userId: string;
      bookId: string | null;
      title: string | null;
      readingPosition: number | null;
    }
  | { type: 'RenameConversation'; userId: string; title: string }
  | { type: 'ChangeReadingPosition'; userId: string; readingPosition: number | null }
  | {
      type: 'PostUserMessage';
      userId: string;
      messageId: string;
      turnId: string;
      content: string;
      selectedText?: string;
      multitask: 'enqueue' | 'reject' | 'interrupt';
    }
  | { type: 'CancelTurn'; userId: string; turnId: string }
  | { type: 'DeleteConversation'; userId: string };

/** Why a command cannot be carried out; the API maps each code to an HTTP status. */
export class DomainError extends Error {
  constructor(
    readonly code: 'not_found' | 'already_exists' | 'turn_in_progress' | 'turn_not_found',
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
export function decide(command: ConversationCommand, state: ConversationState): ConversationEvent[] {
  if (command.type === 'StartConversation') {
    if (state.status !== 'none') throw new DomainError('already_exists', 'conversation already exists');
    const { userId, bookId, title, readingPosition } = command;
    return [{ type: 'ConversationStarted', data: { ownerId: userId, bookId, title, readingPosition } }];
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
    case 'PostUserMessage': {
      const running = pendingTurns(state);
      if (running.length > 0 && command.multitask === 'reject') {
        throw new DomainError('turn_in_progress', `turn ${running[0].turnId} is still running`);
      }
      const { messageId, turnId, content, selectedText } = command;
      const posted: ConversationEvent = {
        type: 'UserMessagePosted',
        data: { messageId, turnId, content, ...(selectedText !== undefined ? { selectedText } : {}) },
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
    case 'DeleteConversation':
      return [{ type: 'ConversationDeleted', data: {} }];
    default: {
      const unhandled: never = command;
      throw new Error(`unhandled command ${(unhandled as { type: string }).type}`);
    }
  }
}
