/**
 * A real pseudo-terminal for end-to-end tests of the terminal client: a tmux session on a
 * private server socket (so nothing touches anyone else's tmux), keys typed with send-keys, and
 * the screen read with capture-pane. The command's exit code is printed as `[exit N]` when it ends.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { waitFor } from './wait-for';

export interface Pane {
  /** the whole pane, scrollback included, wrapped lines joined */
  screen(): string;
  /** keys as tmux names them: 'Enter', 'C-c', 'C-d', or literal text with { literal: true } */
  keys(...keys: string[]): void;
  type(text: string): void;
  until(what: string, check: (screen: string) => boolean, ms?: number): Promise<string>;
  /** the exit code printed when the command ended */
  exitCode(ms?: number): Promise<number>;
  kill(): void;
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function openPane(command: string[], env: Record<string, string>, opts: { cwd: string }): Pane {
  const socket = `parley-test-${randomBytes(4).toString('hex')}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  const envs = Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)}`);
  const line = `cd ${shellQuote(opts.cwd)} && env ${envs.join(' ')} ${command.map(shellQuote).join(' ')}; echo "[exit $?]"; sleep 600`;
  tmux('new-session', '-d', '-s', 'cli', '-x', '120', '-y', '40', line);
  const pane: Pane = {
    screen: () => tmux('capture-pane', '-p', '-J', '-t', 'cli', '-S', '-2000'),
    keys: (...keys) => void tmux('send-keys', '-t', 'cli', ...keys),
    type: (text) => void tmux('send-keys', '-t', 'cli', '-l', text),
    until: (what, check, ms = 20_000) =>
      waitFor(
        what,
        () => {
          const s = pane.screen();
          return check(s) ? s : undefined;
        },
        ms,
        50,
      ).catch((e: Error) => {
        throw new Error(`${e.message}\nthe screen:\n${pane.screen()}`);
      }),
    exitCode: async (ms = 10_000) => {
      const s = await pane.until('the command to end', (x) => /\[exit \d+\]/.test(x), ms);
      return Number(/\[exit (\d+)\]/.exec(s)![1]);
    },
    kill: () => {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
    },
  };
  return pane;
}
