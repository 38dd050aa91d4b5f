import { AssistantTextDelta } from '@parley/conversation';
import { LiveDeltas } from '@parley/agent';

/** How long text may wait to be sent with more: well under what a reader notices. */
export const DELTA_BATCH_MS = 40;

/**
 * The text deltas of one LLM call, sent over Redis in batches: a model streams a token or a few
 * at a time, and one PUBLISH each is a Redis round trip each (hundreds a reply). Text that comes
 * within DELTA_BATCH_MS goes out as one delta; indexes stay consecutive within an attempt, so a
 * client joins them as before. A new attempt sends what the old one left first. What is still
 * waiting when the call answers is dropped (`discard`): AssistantReplied, appended next, carries
 * the whole text, so the last batch is not sent twice.
 */
export class DeltaBatcher {
  private pending?: Omit<AssistantTextDelta, 'index'> & { text: string };
  private index = 0;
  private lastAttempt = 1;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly deltas: LiveDeltas,
    private readonly conversationId: string,
    private readonly turnId: string,
    private readonly iteration: number,
  ) {}

  add(text: string, attempt: number): void {
    if (this.pending && this.pending.attempt !== attempt) this.flush();
    if (!this.pending) {
      if (attempt !== this.lastAttempt) [this.lastAttempt, this.index] = [attempt, 0];
      this.pending = { turnId: this.turnId, iteration: this.iteration, attempt, text: '' };
      this.timer = setTimeout(() => this.flush(), DELTA_BATCH_MS);
    }
    this.pending.text += text;
  }

  /** Drops what is waiting: the answer that carries it is about to be appended. */
  discard(): void {
    clearTimeout(this.timer);
    this.pending = undefined;
  }

  /** Sends what is waiting (the call ended, or the batch's time is up). */
  flush(): void {
    clearTimeout(this.timer);
    const delta = this.pending;
    this.pending = undefined;
    if (!delta || !delta.text) return;
    // live only: a delta Redis drops is in AssistantReplied anyway
    this.deltas.publish(this.conversationId, { ...delta, index: this.index++ }).catch(() => undefined);
  }
}
