import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { TurnToEnqueue } from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { conversationIdOf, isConversationEvent, TURN_ENDING_TYPES, turnKeyOf } from '@parley/conversation';
import { CheckpointedConsumerRunner, EventStore, OutsideLogConsumer, StoredEvent } from '@parley/event-store';
import { TurnSequencer } from './turn-sequencer';

const stringOrUndefined = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The turn a UserMessagePosted asks for; undefined for any other event. */
function turnToEnqueue(event: StoredEvent): TurnToEnqueue | undefined {
  if (!isConversationEvent(event) || event.type !== 'UserMessagePosted') return undefined;
  const conversationId = conversationIdOf(event.streamId);
  if (!conversationId) return undefined;
  // the post's trace, not this poll's: the turn's job and its run are seen in the trace of its POST
  return { conversationId, turnId: event.data.turnId, traceparent: stringOrUndefined(event.metadata.traceparent) };
}

/**
 * Enqueues a job for every UserMessagePosted in the log, so a turn is answered even when the API
 * died between its append and its own enqueue. At least once; the job id makes repeats harmless.
 *
 * It is the safety net, not the path: the API enqueues each turn itself. So it reads the log on
 * a timer (EVENT_POLL_MS), a batch of whatever was appended meanwhile, instead of waking on every
 * append: a turn's appends cost it no read of the log and no checkpoint move.
 */
@Injectable()
export class TurnDispatcher implements OutsideLogConsumer, OnApplicationBootstrap, OnApplicationShutdown {
  readonly name = 'turn-dispatcher';
  readonly outsideTransaction = true;
  private readonly logger = new Logger(TurnDispatcher.name);
  private readonly runner: CheckpointedConsumerRunner;

  constructor(
    store: EventStore,
    private readonly sequencer: TurnSequencer,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {
    this.runner = new CheckpointedConsumerRunner(store, this, undefined, {
      pollMs: config.eventPollMs,
      exclusive: true, // one worker dispatches at a time; the rest stand by
      onError: (e) => this.logger.error(`dispatch failed: ${(e as Error)?.message ?? e}`),
    });
  }

  async handle(event: StoredEvent): Promise<void> {
    const turn = turnToEnqueue(event);
    if (turn) await this.sequencer.enqueue(turn.conversationId, turn.turnId, turn.traceparent);
  }

  /**
   * A turn that already ended within the batch was run: it needs no job (most turns, at a poll a
   * second). The others are queued together, one Redis round trip instead of one a turn.
   */
  async handleBatch(events: StoredEvent[]): Promise<void> {
    const ended = new Set(
      events.flatMap((e) => (isConversationEvent(e) && TURN_ENDING_TYPES.includes(e.type) ? [turnKeyOf(e)] : [])),
    );
    const turns = events.flatMap((e) => (ended.has(turnKeyOf(e)) ? [] : (turnToEnqueue(e) ?? [])));
    if (turns.length > 0) await this.sequencer.enqueueAll(turns);
  }

  onApplicationBootstrap(): void {
    if (this.config.worker.dispatcherEnabled) this.runner.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runner.stop();
  }
}
