import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig, CONFIG } from '@parley/config';
import { AppendNotifier, CheckpointedConsumerRunner, EventStore, inTransaction, Wakeup } from '@parley/event-store';
import { DueDelivery, retryDelayMs, WebhookDeliveriesConsumer, WebhookOutbox, WebhookSender } from '@parley/webhooks';

/**
 * Deliveries one worker sends at once. A slow receiver holds one slot until its deadline, and a
 * reader no more than WEBHOOKS_IN_FLIGHT_PER_READER of them: the rest stay for other readers.
 */
const IN_FLIGHT = 32;
/**
 * A delivery's lease beyond its timeout: another sender takes it only after a sender died holding
 * it. A try ends by WEBHOOKS_TIMEOUT_MS whatever the receiver does, so a few seconds cover the
 * recording; a longer lease would hold a dead sender's deliveries against the endpoint's in-flight
 * cap, keeping its next deliveries waiting.
 */
const LEASE_MARGIN_MS = 5_000;
/** Notes of books made ready turned into deliveries per look. */
const RELAYED_BOOKS = 100;
/** After the log consumer wrote deliveries, how long before looking (its statement commits meanwhile). */
const AFTER_RECORDED_MS = 30;
/**
 * How long the outbox lags the log at most for the sake of batching: a turn's appends come
 * milliseconds apart, and one statement a batch serves them all (a delivery is not that urgent).
 */
const OUTBOX_COALESCE_MS = 25;

/**
 * Webhooks in the worker (docs/webhooks.md): a checkpointed consumer of the log writes each
 * delivery to the outbox (one worker at a time, the others stand by), and every worker sends the
 * due ones, each taken under a lease, retried with exponential backoff until the receiver answers
 * 2xx; a delivery that fails its last try disables its endpoint.
 */
@Injectable()
export class WebhookDeliveries implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookDeliveries.name);
  private readonly runner: CheckpointedConsumerRunner;
  private readonly wakeup = new Wakeup();
  private running = false;
  private loop?: Promise<void>;

  constructor(
    store: EventStore,
    notifier: AppendNotifier,
    @Inject(Pool) private readonly pool: Pool,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly outbox: WebhookOutbox,
    private readonly sender: WebhookSender,
  ) {
    const consumer = new WebhookDeliveriesConsumer(() => setTimeout(this.wakeup.poke, AFTER_RECORDED_MS));
    this.runner = new CheckpointedConsumerRunner(store, consumer, notifier, {
      pollMs: config.eventPollMs,
      coalesceMs: OUTBOX_COALESCE_MS,
      exclusive: true,
      onError: (e, event) =>
        this.logger.error(
          `webhook outbox failed${event ? ` on ${event.type} ${event.id}` : ''}: ${String((e as Error)?.message ?? e)}`,
        ),
    });
  }

  onApplicationBootstrap(): void {
    this.runner.start();
    this.running = true;
    this.loop = this.send();
  }

  async onApplicationShutdown(): Promise<void> {
    this.running = false;
    this.wakeup.poke();
    await Promise.all([this.runner.stop(), this.loop]);
  }

  /**
   * Sends what is due until stopped, up to IN_FLIGHT at once: free slots take more as soon as a
   * delivery ends (it pokes), else after a poll period; a full take looks again at once.
   */
  private async send(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    while (this.running) {
      this.wakeup.reset();
      let full = false;
      try {
        const free = IN_FLIGHT - inFlight.size;
        if (free > 0) {
          const due = await this.takeDue(free);
          full = due.length === free;
          for (const delivery of due) {
            const sending: Promise<void> = this.deliver(delivery)
              .catch((e: Error) => this.logger.warn(`webhook delivery ${delivery.messageId}: ${e.message}`))
              .finally(() => {
                inFlight.delete(sending);
                this.wakeup.poke();
              });
            inFlight.add(sending);
          }
        }
      } catch (e) {
        this.logger.warn(`webhook deliveries: ${(e as Error).message}`);
      }
      if (!full && this.running) await this.wakeup.wait(this.config.eventPollMs);
    }
    await Promise.all(inFlight); // a delivery cut off here is taken again once its lease ends
  }

  private async takeDue(limit: number): Promise<DueDelivery[]> {
    const { timeoutMs, inFlightPerEndpoint, inFlightPerReader } = this.config.webhooks;
    // most looks find nothing: an idle worker makes one cheap statement a poll, not a transaction
    if (!(await this.outbox.anythingDue())) return [];
    return inTransaction(this.pool, async (tx) => {
      const outbox = new WebhookOutbox(tx);
      // books made ready since the last look become deliveries first, taken in this same pass
      await outbox.relayReadyBooks(RELAYED_BOOKS);
      return outbox.takeDue(limit, timeoutMs + LEASE_MARGIN_MS, {
        perEndpoint: inFlightPerEndpoint,
        perReader: inFlightPerReader,
      });
    });
  }

  private async deliver(delivery: DueDelivery): Promise<void> {
    const outcome = await this.sender.send(delivery);
    if (outcome.delivered) return this.outbox.delivered(delivery.id);
    if (outcome.detail) this.logger.warn(`webhook delivery ${delivery.messageId} ${outcome.error}: ${outcome.detail}`);
    const { maxAttempts } = this.config.webhooks;
    if (delivery.attempt >= maxAttempts) {
      this.logger.warn(
        `webhook endpoint ${delivery.endpointId} disabled: ${delivery.messageId} failed ${maxAttempts} times (${outcome.error})`,
      );
      return this.outbox.giveUp(delivery, outcome.error);
    }
    await this.outbox.retryLater(delivery.id, outcome.error, retryDelayMs(delivery.attempt, this.config.webhooks));
  }
}
