import { Proc } from './stack';

/** A process's log messages (pino JSON lines) that match. */
export const logLines = (w: Proc, pattern: RegExp): string[] =>
  w
    .output()
    .split('\n')
    .map((line) => {
      try {
        return String((JSON.parse(line) as { msg?: unknown }).msg ?? '');
      } catch {
        return '';
      }
    })
    .filter((msg) => pattern.test(msg));

/** Jobs a worker took over (a lock that lapsed) or lost: a step in flight there may be made twice. */
export const takeovers = (workers: Proc[]): string[] =>
  workers.flatMap((w) => logLines(w, /stalled: its lock lapsed|lost the lock/).map((m) => `${w.name}: ${m}`));
