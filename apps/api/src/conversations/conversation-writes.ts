import { Injectable } from '@nestjs/common';
import { CommandOptions, ConversationEvent, handleCommand, ReaderCommand } from '@parley/conversation';
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
}
