import { Pool } from 'pg';
import { CheckpointMove, SingleStatementLogConsumer, StoredEvent } from '@parley/event-store';
import { LoggedMessage, messageOf } from './webhook-messages';
import { WebhookOutbox } from './webhook-outbox';

export const WEBHOOKS_CONSUMER = 'webhooks';

/**
 * Turns the log into webhook deliveries: each turn's end and batch's completion, for the
 * endpoints of the conversation's owner, written to the outbox by the statement that moves this
 * consumer's checkpoint (one round trip a batch). A crash before it replays the batch, and the
 * deliveries' ids make the replay write nothing twice: none is lost, none doubled.
 */
export class WebhookDeliveriesConsumer implements SingleStatementLogConsumer {
  readonly name = WEBHOOKS_CONSUMER;
  readonly singleStatement = true;

  /** `recorded`: told how many deliveries a batch wrote (the sender then looks at once). */
  constructor(private readonly recorded: (count: number) => void = () => undefined) {}

  async applyBatch(events: StoredEvent[], db: Pick<Pool, 'query'>, move: CheckpointMove): Promise<boolean> {
    const messages = events.map(messageOf).filter((m): m is LoggedMessage => m !== null);
    const { moved, written } = await new WebhookOutbox(db).recordLogged(messages, move);
    if (written > 0) this.recorded(written);
    return moved;
  }
}
