import { Injectable } from '@nestjs/common';
import { AGENT_TURNS_QUEUE, legacyRunTurnJobId, runTurnJobId } from '@parley/agent';
import {
  Appended,
  CommandStore,
  ConversationEvent,
  ConversationFoldSource,
  conversationStreamId,
  DomainError,
  ErasureSubject,
  fold,
  FoldedForCommands,
  handleCommand,
  pendingTurns,
} from '@parley/conversation';
import { EventStore, StoredEvent } from '@parley/event-store';
import { ledgerRowsOf, UsageLedger } from '@parley/read-models';
import { ErasureRepository, JobRef } from './erasure.repository';

/** A conversation just erased, with the turns it left running (their workers must stop). */
export interface ErasedConversation {
  conversationId: string;
  erasedEvents: number;
  unendedTurns: string[];
}

export interface EraseRequest {
  /** the reader who asks (null: the system, for a conversation deleted before erasure existed) */
  userId: string | null;
  subject: ErasureSubject;
  /** the audit record the tombstone names */
  erasureId: string;
  /** If-Match: 409 when the conversation moved past it */
  ifMatch?: number;
}

/** The tombstone as eraseStream stored it, and how many events went with the erasure. */
interface ErasedStream extends Appended {
  erasedEvents: number;
}

/**
 * Erases one conversation through the event store (docs/erasure.md), on the one command path:
 * handleCommand decides its tombstone (ConversationErased) on the folded stream and writes it with
 * eraseStream, which appends it and deletes the rest in the transaction that also saves the
 * conversation's spending to the usage ledger, drops its read-model rows and names the Redis jobs
 * that held its data for removal. A turn appended meanwhile makes it decide again on what is there.
 */
@Injectable()
export class ConversationEraser {
  private readonly folds: ConversationFoldSource<FoldedForCommands>;

  constructor(private readonly store: EventStore) {
    this.folds = freshFolds(store);
  }

  /** Undefined when there is nothing of the reader's to erase (no such conversation, or erased already). */
  async erase(conversationId: string, request: EraseRequest): Promise<ErasedConversation | undefined> {
    const { userId, subject, erasureId, ifMatch } = request;
    try {
      const { folded, appended } = await handleCommand(
        erasing(this.store, conversationId),
        this.folds,
        conversationId,
        [{ type: 'EraseConversation', userId, subject }],
        // content-free: the tombstone names its audit record, never the reader nor a trace
        { ifMatch, metadata: () => ({ erasureId }) },
      );
      return {
        conversationId,
        erasedEvents: appended?.erasedEvents ?? 0,
        unendedTurns: pendingTurns(folded.state).map((t) => t.turnId),
      };
    } catch (e) {
      if (e instanceof DomainError && e.code === 'not_found') return undefined;
      throw e;
    }
  }
}

/**
 * The stream folded from the log at each load. Not a fold cache: an erasure loads its stream once,
 * so a cache would only keep (and snapshot) a conversation that is about to be gone.
 */
export function freshFolds(store: EventStore): ConversationFoldSource<FoldedForCommands> {
  return {
    async load(conversationId) {
      const state = fold(await store.readStream<ConversationEvent>(conversationStreamId(conversationId)));
      return { version: state.version, state };
    },
  };
}

/** Writes the tombstone with eraseStream, the rest of the erasure in its transaction. */
function erasing(store: EventStore, conversationId: string): CommandStore<ErasedStream> {
  return {
    async append(streamId, [tombstone, ...more], { expectedVersion }) {
      if (more.length > 0 || typeof expectedVersion !== 'number')
        throw new Error(`an erasure appends one tombstone to an existing stream (${streamId})`);
      const erased = await store.eraseStream<ConversationEvent>(streamId, tombstone, {
        expectedVersion,
        within: async (tx, events) => {
          await new UsageLedger(tx).record(ledgerRowsOf(events));
          const repo = new ErasureRepository(tx);
          await repo.deleteReadModels(conversationId);
          await repo.addPendingJobs(turnJobsOf(conversationId, events));
        },
      });
      return { events: [erased.tombstone], erasedEvents: erased.erasedEvents };
    },
  };
}

/** The run-turn jobs of the conversation's turns: their data may hold a kept answer. */
function turnJobsOf(conversationId: string, events: StoredEvent<ConversationEvent>[]): JobRef[] {
  return events.flatMap((e) =>
    e.type === 'UserMessagePosted'
      ? [runTurnJobId, legacyRunTurnJobId].map((id) => ({
          queue: AGENT_TURNS_QUEUE,
          jobId: id(conversationId, e.data.turnId),
        }))
      : [],
  );
}
