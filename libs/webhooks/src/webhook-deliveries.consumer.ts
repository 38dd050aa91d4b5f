import { PoolClient } from 'pg';
import { LogConsumer, StoredEvent } from '@parley/event-store';
import { LoggedMessage, messageOf } from './webhook-messages';
import { WebhookOutbox } from './webhook-outbox';

export const WEBHOOKS_CONSUMER = 'webhooks';

/**
 * Turns the log into webhook deliveries: each turn's end and batch's completion, for the
 * endpoints of the conversation's owner, written to the outbox in the transaction that moves
 * this consumer's checkpoint. A crash before the commit replays the batch, and the deliveries'
 * ids make the replay write nothing twice: none is lost, none doubled.
 */
export class WebhookDeliveriesConsumer implements LogConsumer {
  readonly name = WEBHOOKS_CONSUMER;

  /** `recorded`: told how many deliveries a batch wrote (the sender then looks at once). */
  constructor(private readonly recorded: (count: number) => void = () => undefined) {}

  async handle(event: StoredEvent, tx: PoolClient): Promise<void> {
    await this.handleBatch([event], tx);
  }

  async handleBatch(events: StoredEvent[], tx: PoolClient): Promise<void> {
    const messages = events.map(messageOf).filter((m): m is LoggedMessage => m !== null);
    const written = await new WebhookOutbox(tx).recordLogged(messages);
    if (written > 0) this.recorded(written);
  }
}
