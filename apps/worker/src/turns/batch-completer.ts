import { Injectable, Logger } from '@nestjs/common';
import { findTurn, handleCommand } from '@parley/conversation';
import { EventStore, WrongExpectedVersionError } from '@parley/event-store';
import { ConversationFolds, FoldedConversation } from './conversation-folds';

/**
 * Appends a batch's BatchCompleted once every item's turn has ended: called when a turn of a
 * batch ends, and by the sweep for batches a dying worker left unfinished. CompleteBatch goes
 * through the one command path: decide() refuses a second completion and the append is at the
 * folded version, so it is written once however many workers check at the same time.
 */
@Injectable()
export class BatchCompleter {
  private readonly logger = new Logger(BatchCompleter.name);

  constructor(
    private readonly store: EventStore,
    private readonly folds: ConversationFolds,
  ) {}

  /** After a turn ended (`folded`: its conversation as of that ending): completes its batch if it was the last. */
  async turnEnded(turnId: string, folded: Pick<FoldedConversation, 'turns'>): Promise<void> {
    const batch = folded.turns.find((t) => t.turnId === turnId)?.batch;
    if (batch) await this.check(batch.conversationId, batch.batchId);
  }

  /** Completes the batch if every item has ended; true when it is (or already was) complete. */
  async check(conversationId: string, batchId: string): Promise<boolean> {
    const folded = await this.folds.load(conversationId);
    const batch = folded.state.batches[batchId];
    if (!batch) return false;
    if (batch.completed) return true;
    let answered = 0;
    let failures = 0;
    for (const item of batch.items) {
      const itemFolded = item.conversationId === conversationId ? folded : await this.folds.load(item.conversationId);
      // a fork deleted since ends its item: it will never answer
      const status =
        itemFolded.state.status === 'active' ? findTurn(itemFolded.state, item.turnId)?.status : 'cancelled';
      if (status === 'pending' || status === undefined) return false;
      if (status === 'replied') answered++;
      if (status === 'failed') failures++;
    }
    // the items have all ended, so a lost race changes none of these counts: decided again, or refused
    const command = { type: 'CompleteBatch' as const, userId: folded.state.ownerId ?? '', batchId, answered, failures };
    try {
      const { events } = await handleCommand(this.store, this.folds, conversationId, [command], {
        correlationId: batchId,
        retries: 4,
      });
      if (events.length > 0) this.logger.log(`batch ${batchId} completed: ${answered} answered, ${failures} failed`);
      return true;
    } catch (e) {
      if (e instanceof WrongExpectedVersionError) return false;
      throw e;
    }
  }
}
