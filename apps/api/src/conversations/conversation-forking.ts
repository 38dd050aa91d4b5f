import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { BookQueries } from '@parley/books';
import { assertVisible, ConversationEvent, conversationStreamId, fold } from '@parley/conversation';
import { EventStore } from '@parley/event-store';
import { AuthUser } from '../auth/auth-user';
import { bookReaderOf } from '../books/book-permissions';
import { invalid } from '../http/problem.exception';
import { ConversationWrites } from './conversation-writes';

/** POST /conversations/:id/fork: a new conversation whose history is the source's events 1..version. */
@Injectable()
export class ConversationForking {
  constructor(
    private readonly store: EventStore,
    private readonly writes: ConversationWrites,
    private readonly books: BookQueries,
  ) {}

  /**
   * The fork's id; turns left open at the version end cancelled in the fork, and its books those
   * of the source at that version that the reader may read now (a catalogue book of a tenant they
   * left stays behind).
   */
  async fork(user: AuthUser, sourceId: string, version: number): Promise<string> {
    const history = await this.store.readStream<ConversationEvent>(conversationStreamId(sourceId));
    const now = fold(history);
    assertVisible(now, user.id);
    if (version > now.version) throw invalid('version', `version must be at most ${now.version}`);
    const atVersion = fold(history.slice(0, version));
    const readableBooks = await this.books.titlesVisibleTo(bookReaderOf(user), atVersion.bookIds);
    const id = randomUUID();
    const source = { conversationId: sourceId, history };
    await this.writes.execute(id, {
      type: 'ForkConversation',
      userId: user.id,
      source,
      version,
      readableBooks: readableBooks.map(({ id, title }) => ({ id, title })),
    });
    return id;
  }
}
