import { randomUUID } from 'node:crypto';
import { AGENT_TURNS_QUEUE, legacyRunTurnJobId, runTurnJobId } from '@parley/agent';
import {
  ConversationEvent,
  conversationStreamId,
  decide,
  DomainError,
  ErasureSubject,
  fold,
  pendingTurns,
} from '@parley/conversation';
import { EventStore, StoredEvent, WrongExpectedVersionError } from '@parley/event-store';
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

const CONFLICT_RETRIES = 5;

/**
 * Erases one conversation through the event store (docs/erasure.md): decides its tombstone
 * (ConversationErased) on the folded stream and has eraseStream append it and delete the rest,
 * in the transaction that also saves its spending to the usage ledger, drops its read-model rows
 * and names the Redis jobs that held its data for removal.
 */
export class ConversationEraser {
  constructor(private readonly store: EventStore) {}

  /** Undefined when there is nothing of the reader's to erase (no such conversation, or erased already). */
  async erase(conversationId: string, request: EraseRequest): Promise<ErasedConversation | undefined> {
    const streamId = conversationStreamId(conversationId);
    for (let attempt = 0; ; attempt++) {
      const events = await this.store.readStream<ConversationEvent>(streamId);
      const state = fold(events);
      let tombstone: ConversationEvent;
      try {
        [tombstone] = decide({ type: 'EraseConversation', userId: request.userId, subject: request.subject }, state);
      } catch (e) {
        if (e instanceof DomainError && e.code === 'not_found') return undefined;
        throw e;
      }
      if (request.ifMatch !== undefined && state.version !== request.ifMatch)
        throw new WrongExpectedVersionError(streamId, request.ifMatch, state.version);
      try {
        const { erasedEvents } = await this.store.eraseStream<ConversationEvent>(
          streamId,
          { ...tombstone, id: randomUUID(), metadata: { erasureId: request.erasureId } },
          {
            expectedVersion: state.version,
            within: async (tx, erased) => {
              await new UsageLedger(tx).record(ledgerRowsOf(erased));
              const repo = new ErasureRepository(tx);
              await repo.deleteReadModels(conversationId);
              await repo.addPendingJobs(turnJobsOf(conversationId, erased));
            },
          },
        );
        return { conversationId, erasedEvents, unendedTurns: pendingTurns(state).map((t) => t.turnId) };
      } catch (e) {
        // a turn appended meanwhile: erase what is there now
        const retry = e instanceof WrongExpectedVersionError && request.ifMatch === undefined;
        if (!retry || attempt >= CONFLICT_RETRIES) throw e;
      }
    }
  }
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
