import { Injectable } from '@nestjs/common';
import { CommandOptions, ConversationEvent, handleCommand, pendingTurns, ReaderCommand } from '@parley/conversation';
import { EventStore, StoredEvent } from '@parley/event-store';
import { ApiConversationFolds, FoldedConversation } from './api-conversation-folds';

/**
 * The API's one way to write a conversation: the commands through handleCommand (decided on this
 * process's fold, appended at its version; without If-Match a lost race is decided again, with
 * it the client gets 409), which folds the events into that fold at once for the next command here.
 */
@Injectable()
export class ConversationWrites {
  constructor(
    private readonly store: EventStore,
    private readonly folds: ApiConversationFolds,
  ) {}

  async execute(
    conversationId: string,
    commands: ReaderCommand | ReaderCommand[],
    opts: CommandOptions<FoldedConversation> = {},
  ): Promise<StoredEvent<ConversationEvent>[]> {
    const all = Array.isArray(commands) ? commands : [commands];
    const { events } = await handleCommand(this.store, this.folds, conversationId, all, opts);
    return events;
  }

  /**
   * How many of the conversation's open turns come before this one, as this process last folded
   * it (its own append included); 0 when it does not keep the conversation or the turn is not open.
   */
  turnsAhead(conversationId: string, turnId: string): number {
    const kept = this.folds.kept(conversationId);
    if (!kept) return 0;
    return Math.max(
      0,
      pendingTurns(kept.state).findIndex((t) => t.turnId === turnId),
    );
  }
}
