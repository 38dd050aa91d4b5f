import { PoolClient } from 'pg';
import { BookShelf } from '@parley/books';
import {
  AssistantReplied,
  CommandStore,
  conversationIdOf,
  handleCommand,
  ToolResultRecorded,
} from '@parley/conversation';
import { EventStore, StoredEvent, WrongExpectedVersionError } from '@parley/event-store';
import { ConversationLogQueries, ReadModelWrites } from '@parley/read-models';
import { freshFolds } from './conversation-eraser';
import { ErasureRepository } from './erasure.repository';
import type { JournalEntry } from './erasure-journal';

/** What a withdrawal did; `entry` is the completed erasure record, for the journal. */
export interface Withdrawn {
  books: number;
  /** conversations told with `PassagesWithdrawn` */
  conversations: number;
  entry?: JournalEntry;
}

/**
 * A catalogue book withdrawn by its publisher (docs/erasure.md), as one transaction: the book goes
 * with its passages, so every event that names one of them reads the withdrawal notice from then
 * on (the log keeps passages by reference and is never updated); the passages' ids are kept as
 * withdrawn, for events stored with their text by 0.3; each conversation that quoted the book is
 * told so by `PassagesWithdrawn`, decided and appended at its version, so every fold of it reads
 * it anew; its read-model rows are read again from the log, and its fold snapshots dropped; the
 * erasure record is completed. A crash before the commit leaves the book in the catalogue and
 * the record open, and the erasure sweep withdraws it again.
 */
export class CatalogueWithdrawal {
  constructor(
    private readonly store: EventStore,
    private readonly shelf: BookShelf,
  ) {}

  async withdraw(erasureId: string, bookId: string): Promise<Withdrawn> {
    return this.store.withTransaction(async (tx) => {
      const repo = new ErasureRepository(tx);
      const chunkIds = await this.shelf.withdraw(bookId, tx);
      if (chunkIds === null) return { books: 0, conversations: 0, entry: await repo.complete(erasureId, NONE) };
      const citing = await new ConversationLogQueries(tx).eventsCitingPassages(chunkIds);

      const streams = new Map<string, number>();
      for (const e of citing) streams.set(e.streamId, (streams.get(e.streamId) ?? 0) + 1);
      let told = 0;
      for (const [streamId, redactedEvents] of streams) {
        const conversationId = conversationIdOf(streamId);
        if (!conversationId) continue;
        const { events } = await handleCommand(appendingIn(tx, this.store), freshFolds(this.store), conversationId, [
          { type: 'RecordPassagesWithdrawn', userId: null, bookId, redactedEvents },
        ]);
        if (events.length) told++;
      }
      await new ReadModelWrites(tx).redactMessages(
        (
          await this.store.readEvents(
            citing.map((e) => e.eventId),
            tx,
          )
        ).flatMap(messageRowOf),
      );
      await repo.deleteSnapshotsOf([...streams.keys()]);
      return { books: 1, conversations: told, entry: await repo.complete(erasureId, NONE) };
    });
  }
}

const NONE = { streams: 0, events: 0 };

/**
 * Appends inside the withdrawal's transaction, each append under a savepoint: a writer that took
 * the version first (a turn answering meanwhile) costs this append, not the transaction, and the
 * command is decided again on the new version.
 */
function appendingIn(tx: PoolClient, store: EventStore): CommandStore {
  return {
    async append(streamId, events, { expectedVersion }) {
      await tx.query('SAVEPOINT parley_withdrawal_append');
      try {
        const appended = await store.appendIn(tx, streamId, events, expectedVersion);
        await tx.query('RELEASE SAVEPOINT parley_withdrawal_append');
        return appended;
      } catch (e) {
        await tx.query('ROLLBACK TO SAVEPOINT parley_withdrawal_append');
        if ((e as { code?: string }).code === UNIQUE_VIOLATION)
          throw new WrongExpectedVersionError(streamId, expectedVersion, await store.streamVersion(streamId, tx));
        throw e;
      }
    },
  };
}

const UNIQUE_VIOLATION = '23505';

/** A citing event's message row as the log now reads it: the notice where the passages were. */
function messageRowOf(event: StoredEvent) {
  const conversationId = conversationIdOf(event.streamId);
  if (!conversationId) return [];
  if (event.type === 'ToolResultRecorded') {
    const data = event.data as ToolResultRecorded['data'];
    return [{ conversationId, version: event.version, content: data.content, citations: data.chunks ?? [] }];
  }
  const data = event.data as AssistantReplied['data'];
  return [{ conversationId, version: event.version, content: data.content, citations: data.citations }];
}
