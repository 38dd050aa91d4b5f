import type { AssistantTextDelta } from '@parley/conversation';

/** Where a turn's text goes: blocks of text, opened, written to, closed, never interleaved. */
export interface TextSink {
  textStart(id: string): void;
  textDelta(id: string, delta: string): void;
  textEnd(id: string): void;
}

interface Block {
  id: string;
  iteration: number;
  attempt: number;
  /** the delta index expected next */
  next: number;
  /** what the client has of the block */
  sent: string;
  /** a delta was missed (joined mid-call, a lost message): the rest comes from the log */
  stalled: boolean;
}

/**
 * A turn's text as a protocol client can show it: each model call's text streams live as a block
 * (the AssistantTextDelta frames of one attempt of one call), and the log completes it: the call's
 * text recorded on its ToolInvoked (assistantText), the answer on AssistantReplied. A block the
 * feed joined mid-way or lost a delta of stops streaming and is completed from the log, so the
 * client's last block is the recorded answer however the deltas went. Deltas arrive over Redis
 * and the log by polling, in no set order between them: a call's deltas after its log event are dropped.
 */
export class AnswerText {
  private open: Block | undefined;
  /** model calls whose text the log has completed */
  private readonly done = new Set<number>();
  private finished = false;

  constructor(
    private readonly turnId: string,
    private readonly sink: TextSink,
  ) {}

  delta(d: AssistantTextDelta): void {
    if (this.finished || d.turnId !== this.turnId || this.done.has(d.iteration)) return;
    const open = this.open;
    if (!open || open.iteration !== d.iteration || open.attempt !== d.attempt) {
      // an older attempt's delta arriving late is dropped; a newer call or attempt opens its block
      if (open && (d.iteration < open.iteration || (d.iteration === open.iteration && d.attempt < open.attempt)))
        return;
      this.end();
      this.open = this.start(d.iteration, d.attempt, d.index);
    }
    const block = this.open!;
    if (block.stalled) return;
    if (d.index !== block.next) {
      block.stalled = true; // a gap: nothing more streams, the log completes the block
      return;
    }
    block.next++;
    this.send(block, d.text);
  }

  /** The text of model call `iteration` as the log recorded it (ToolInvoked.assistantText). */
  callText(iteration: number, text: string): void {
    if (this.finished || this.done.has(iteration)) return;
    this.done.add(iteration);
    this.complete(this.open?.iteration === iteration ? this.open : undefined, iteration, text);
  }

  /** The answer (AssistantReplied.content): completes the block in flight; no text comes after it. */
  answer(content: string, iteration: number): void {
    if (this.finished) return;
    this.finished = true;
    this.complete(this.open, iteration, content);
  }

  /** The turn ended without an answer (failed, cancelled) or the feed stopped: the open block closes as it is. */
  end(): void {
    if (!this.open) return;
    if (this.open.sent.length > 0 || !this.open.stalled) this.sink.textEnd(this.open.id);
    this.open = undefined;
  }

  private start(iteration: number, attempt: number, index: number): Block {
    const id = `${this.turnId}:${iteration}:${attempt}`;
    // a block joined mid-way is opened when it has text to send (the log's, at the end)
    const block = { id, iteration, attempt, next: index, sent: '', stalled: index !== 0 };
    if (!block.stalled) this.sink.textStart(id);
    return block;
  }

  /** Sends what `text` has beyond what the client has of `block`, and closes it. */
  private complete(block: Block | undefined, iteration: number, text: string): void {
    if (block && text.startsWith(block.sent)) {
      this.send(block, text.slice(block.sent.length));
      this.end();
      return;
    }
    this.end();
    if (text.length === 0) return;
    // no block of this call, or one whose text the log contradicts (a retried call): the recorded text whole
    const whole = this.start(iteration, 0, 0);
    this.send(whole, text);
    this.open = whole;
    this.end();
  }

  private send(block: Block, text: string): void {
    if (text.length === 0) return;
    if (block.sent.length === 0 && block.stalled) this.sink.textStart(block.id);
    block.sent += text;
    this.sink.textDelta(block.id, text);
  }
}
