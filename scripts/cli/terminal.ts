/**
 * Keyboard input for the chat. On a terminal, a fresh readline reads each line (with the
 * session's history), and while an answer streams no readline exists at all: stdin is raw and
 * only Ctrl-C matters. A readline left open would echo keys into the streamed text and redraw
 * its prompt over it. Without a terminal (piped input) one readline reads every line, and
 * Ctrl-C arrives as SIGINT.
 */
import { createInterface, type Interface } from 'node:readline';

/** A line typed, or null when the user left (Ctrl-D, Ctrl-C at the prompt, end of input). */
export type Line = string | null;

export interface Terminal {
  ask(prompt: string): Promise<Line>;
  /** Calls `onInterrupt` on each Ctrl-C until the returned function is called. */
  whileBusy(onInterrupt: () => void): () => void;
  write(text: string): void;
  close(): void;
}

export function openTerminal(input = process.stdin, output = process.stdout): Terminal {
  return input.isTTY ? new TtyTerminal(input, output) : new PipedTerminal(input, output);
}

class TtyTerminal implements Terminal {
  private history: string[] = [];

  constructor(
    private readonly input: NodeJS.ReadStream,
    private readonly output: NodeJS.WriteStream,
  ) {}

  ask(prompt: string): Promise<Line> {
    return new Promise((resolve) => {
      const rl = createInterface({
        input: this.input,
        output: this.output,
        terminal: true,
        history: this.history,
        historySize: 200,
      });
      rl.on('history', (h: string[]) => (this.history = h));
      let done = false;
      const finish = (line: Line) => {
        if (done) return;
        done = true;
        rl.close();
        resolve(line);
      };
      rl.once('line', (l) => finish(l));
      rl.once('SIGINT', () => {
        this.output.write('\n');
        finish(null);
      });
      rl.once('close', () => finish(null)); // Ctrl-D on an empty line
      rl.setPrompt(prompt);
      rl.prompt();
    });
  }

  whileBusy(onInterrupt: () => void): () => void {
    const onData = (chunk: Buffer) => {
      if (chunk.includes(0x03)) onInterrupt(); // Ctrl-C in raw mode; other keys are dropped
    };
    this.input.setRawMode(true);
    this.input.on('data', onData);
    this.input.resume();
    return () => {
      this.input.off('data', onData);
      this.input.setRawMode(false);
      this.input.pause();
    };
  }

  write(text: string): void {
    this.output.write(text);
  }

  close(): void {
    if (this.input.isRaw) this.input.setRawMode(false);
    this.input.pause();
  }
}

class PipedTerminal implements Terminal {
  private readonly rl: Interface;
  private readonly lines: string[] = [];
  private waiting?: (line: Line) => void;
  private interrupt?: () => void;
  private ended = false;
  /** Ctrl-C (SIGINT): cancels an answer, or leaves at the prompt as on a terminal */
  private readonly onSigint = () => {
    if (this.interrupt) this.interrupt();
    else if (this.waiting) this.take(null);
    else process.exit(130);
  };

  constructor(
    input: NodeJS.ReadStream,
    private readonly output: NodeJS.WriteStream,
  ) {
    process.on('SIGINT', this.onSigint);
    this.rl = createInterface({ input, terminal: false });
    this.rl.on('line', (l) => {
      if (this.waiting) this.take(l);
      else this.lines.push(l);
    });
    this.rl.on('close', () => {
      this.ended = true;
      this.take(null);
    });
  }

  private take(line: Line): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.(line);
  }

  ask(prompt: string): Promise<Line> {
    this.output.write(prompt);
    if (this.lines.length) return Promise.resolve(this.lines.shift()!);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  whileBusy(onInterrupt: () => void): () => void {
    this.interrupt = onInterrupt;
    return () => (this.interrupt = undefined);
  }

  write(text: string): void {
    this.output.write(text);
  }

  close(): void {
    process.off('SIGINT', this.onSigint);
    this.rl.close();
  }
}
