import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { assertVisible, ConversationEvent, conversationStreamId, fold } from '@parley/conversation';
import { EventStore } from '@parley/event-store';
import { invalid } from '../http/problem.exception';
import { ConversationWrites } from './conversation-writes';

/** POST /conversations/:id/fork: a new conversation whose history is the source's events 1..version. */
@Injectable()
export class ConversationForking {
  constructor(
    private readonly store: EventStore,
    private readonly writes: ConversationWrites,
  ) {}

  /** The fork's id; turns left open at the version end cancelled in the fork. */
  async fork(userId: string, sourceId: string, version: number): Promise<string> {
    const history = await this.store.readStream<ConversationEvent>(conversationStreamId(sourceId));
    const now = fold(history);
    assertVisible(now, userId);
    if (version > now.version) throw invalid('version', `version must be at most ${now.version}`);
    const id = randomUUID();
    const source = { conversationId: sourceId, history };
    await this.writes.execute(id, { type: 'ForkConversation', userId, source, version });
    return id;
  }
}
