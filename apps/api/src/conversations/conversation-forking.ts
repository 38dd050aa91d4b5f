import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { BookQueries } from '@parley/books';
import { assertVisible, ConversationEvent, conversationStreamId, fold } from '@parley/conversation';
import { EventStore } from '@parley/event-store';
import { AuthUser } from '../auth/auth-user';
import { bookReaderOf } from '../books/book-permissions';
import { invalid } from '../http/problem.exception';
import { RateLimits } from '../rate-limits/rate-limits';
import { ConversationWrites } from './conversation-writes';

/** A fork counts 1, and 1 more per this many events it copies: a long history costs more to copy. */
export const FORK_EVENTS_PER_POINT = 100;

/** What a fork of `events` events counts against RATE_LIMIT_FORKS_PER_MIN, at most the whole minute's `capacity`. */
export function forkPoints(events: number, capacity: number): number {
  return Math.min(1 + Math.floor(events / FORK_EVENTS_PER_POINT), capacity);
}

/** POST /conversations/:id/fork: a new conversation whose history is the source's events 1..version. */
@Injectable()
export class ConversationForking {
  constructor(
    private readonly store: EventStore,
    private readonly writes: ConversationWrites,
    private readonly books: BookQueries,
    private readonly rateLimits: RateLimits,
  ) {}

  /**
   * The fork's id; turns left open at the version end cancelled in the fork, and its books those
   * of the source at that version that the reader may read now (a catalogue book of a tenant they
   * left stays behind). Counted against the reader's fork limit.
   */
  async fork(user: AuthUser, sourceId: string, version: number): Promise<string> {
    return this.copy(user, sourceId, version, (copied) =>
      this.rateLimits.consume('forks', user.id, forkPoints(copied, this.rateLimits.capacity('forks'))),
    );
  }

  /** A fork for one prompt of an independent batch: the batch and its prompts are counted instead. */
  async forkForBatch(user: AuthUser, sourceId: string, version: number): Promise<string> {
    return this.copy(user, sourceId, version, async () => undefined);
  }

  /** `admit` is told how many events the fork would copy before anything is written. */
  private async copy(
    user: AuthUser,
    sourceId: string,
    version: number,
    admit: (copied: number) => Promise<void>,
  ): Promise<string> {
    const history = await this.store.readStream<ConversationEvent>(conversationStreamId(sourceId));
    const now = fold(history);
    assertVisible(now, user.id);
    if (version > now.version) throw invalid('version', `version must be at most ${now.version}`);
    await admit(version);
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
