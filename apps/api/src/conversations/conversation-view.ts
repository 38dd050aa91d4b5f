import { ConversationState } from '@parley/conversation';
import { FoldedConversation } from './api-conversation-folds';

/** A conversation as GET /conversations/:id shows it: the folded state plus its id and times. */
export type ConversationView = { id: string } & Pick<
  ConversationState,
  'bookId' | 'bookIds' | 'title' | 'readingPosition' | 'forkedFrom' | 'policy' | 'version' | 'messageCount' | 'turns'
> & { createdAt: string | null; lastActivityAt: string | null };

export function toView(
  id: string,
  { state, createdAt, lastActivityAt }: Omit<FoldedConversation, 'version'>,
): ConversationView {
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
