/**
 * Shows one agent turn as it happens: the text as its deltas stream in, tool calls (with
 * --verbose), then the sources. Deltas are a live preview only (docs/events.md): the stored
 * events carry each model call's whole text, and only what was not printed yet is printed from
 * them, so a missed delta (a dropped connection) or a late one never shows text twice.
 */
import type { EventEnvelope, TextDelta } from './types';
import {
  citationLines,
  costLine,
  cyan,
  dim,
  failureLine,
  noteNumbers,
  red,
  toolCallLine,
  toolResultLine,
} from './format';

/** What has been shown of one model call (an iteration) of the turn. */
interface Shown {
  attempt: number;
  /** the delta index expected next; another means one was missed, so wait for the stored text */
  next: number;
  printed: string;
  gap: boolean;
  done: boolean;
}

export type Write = (text: string) => void;

export class TurnView {
  private readonly shown = new Map<number, Shown>();
  private readonly numbers = new Map<string, number>();
  private atLineStart = true;
  private muted = false;
  ended = false;

  constructor(
    readonly turnId: string,
    private readonly write: Write,
    private readonly verbose: boolean,
  ) {}

  /** After Ctrl-C: nothing more of this turn's text is printed, whatever is still in flight. */
  mute(): void {
    this.muted = true;
  }

  delta(d: TextDelta): void {
    if (this.muted || this.ended || d.turnId !== this.turnId) return;
    let it = this.shown.get(d.iteration);
    if (!it) this.shown.set(d.iteration, (it = { attempt: d.attempt, next: 0, printed: '', gap: false, done: false }));
    if (it.done || d.attempt < it.attempt) return;
    if (d.attempt > it.attempt) {
      // the model call was cut off and made again: its text starts over (said, not erased)
      if (it.printed) this.line(dim('(the model started its answer again)'));
      Object.assign(it, { attempt: d.attempt, next: 0, printed: '', gap: false });
    }
    if (it.gap) return;
    if (d.index !== it.next) {
      it.gap = true;
      return;
    }
    it.next++;
    it.printed += d.text;
    this.text(d.text);
  }

  /** Handles a stored event; answers true once it ended the turn. */
  event(e: EventEnvelope): boolean {
    const turnId = (e.data as { turnId?: unknown }).turnId;
    if (turnId !== this.turnId || this.ended) return false;
    switch (e.type) {
      case 'ToolInvoked': {
        const t = e.data;
        if (t.assistantText !== undefined) this.finish(t.iteration, t.assistantText);
        if (this.verbose && !this.muted) this.line(`  ${cyan('⚙')} ${toolCallLine(t)}`);
        return false;
      }
      case 'ToolResultRecorded': {
        const r = e.data;
        noteNumbers(r, this.numbers);
        if (this.verbose && !this.muted) this.line(`  ${cyan('↳')} ${dim(toolResultLine(r))}`);
        return false;
      }
      case 'AssistantReplied': {
        const r = e.data;
        if (this.muted) {
          this.line(dim('(the answer was already complete; /history shows it)'));
        } else {
          this.finish(r.iterations, r.content);
          const sources = citationLines(r.citations ?? [], this.numbers);
          if (sources.length) this.line(dim('sources:'));
          for (const s of sources) this.line(s);
          if (this.verbose) this.line(dim(`  ${costLine(r)}`));
        }
        return (this.ended = true);
      }
      case 'TurnFailed':
        this.line(red(failureLine(e.data)));
        return (this.ended = true);
      case 'TurnCancelled':
        this.line(dim('(cancelled)'));
        return (this.ended = true);
      case 'ToolApprovalRequested': {
        // the turn waits for the reader: say what would be done, and how to answer
        const a = e.data;
        this.line(`  ${cyan('?')} the agent asks to call ${a.tool} with ${oneLineJson(a.input)}`);
        this.line(
          dim(
            `    answer: npm run cli -- approve ${e.conversationId} ${a.turnId} ${a.toolCallId} [--deny] [--reason …]`,
          ),
        );
        return false;
      }
      case 'ToolApprovalDecided':
        if (!this.muted)
          this.line(
            dim(
              `  ${e.data.approved ? 'approved' : 'declined'}${e.data.by === 'timeout' ? ' (no answer in time)' : ''}`,
            ),
          );
        return false;
      default:
        return false;
    }
  }

  /** A model call's whole text is known: print what the deltas did not. */
  private finish(iteration: number, full: string): void {
    const it = this.shown.get(iteration) ?? { attempt: 1, next: 0, printed: '', gap: false, done: false };
    this.shown.set(iteration, it);
    if (it.done) return;
    it.done = true;
    if (this.muted) return;
    if (full.startsWith(it.printed)) this.text(full.slice(it.printed.length));
    else this.line(full); // what streamed is not what was kept (a retried call): show the kept text
    if (!this.atLineStart) this.text('\n');
  }

  private text(s: string): void {
    if (!s) return;
    this.write(s);
    this.atLineStart = s.endsWith('\n');
  }

  private line(s: string): void {
    this.text((this.atLineStart ? '' : '\n') + s + '\n');
  }
}

/** A tool call's input on one line, cut to what a terminal line holds. */
function oneLineJson(input: unknown): string {
  const json = JSON.stringify(input) ?? 'null';
  return json.length > 200 ? `${json.slice(0, 199)}…` : json;
}
