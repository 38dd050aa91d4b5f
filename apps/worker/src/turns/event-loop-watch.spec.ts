import { Logger } from '@nestjs/common';
import { EventLoopWatch } from './event-loop-watch';

const block = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    /* a synchronous stall */
  }
};
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits, window by window, until `check` holds; fails after `deadlineMs`. */
async function eventually(check: () => boolean, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`not within ${deadlineMs} ms`);
    await tick(50);
  }
}

describe('EventLoopWatch', () => {
  it('warns about a window whose stall passed the threshold, naming the lock margin, and keeps the worst', async () => {
    const logger = { warn: jest.fn(), debug: jest.fn() } as unknown as Logger;
    const warn = logger.warn as jest.Mock;
    const debug = logger.debug as jest.Mock;
    const watch = new EventLoopWatch(logger, 250, 2_500, 400);
    watch.start();
    try {
      await tick(50);
      block(600);
      // The stalled sample and the report's timer come due together after the stall, in either
      // order: the stall is reported by the window it ends in or by the next one.
      await eventually(() => warn.mock.calls.length > 0, 3_000);
      expect(warn.mock.calls[0][0]).toMatch(
        /max \d+ ms .*a stall past 2500 ms lets another worker take this worker's turns/,
      );
      expect(watch.worst).toBeGreaterThanOrEqual(600);
      // a quiet window after it: logged at debug only, still naming the worst stall
      const debugsBefore = debug.mock.calls.length;
      await eventually(() => debug.mock.calls.length > debugsBefore, 3_000);
      expect(debug.mock.calls.at(-1)?.[0]).toMatch(/^event loop delay over 0.4 s: .*worst since start (\d+) ms\)$/);
      const worstLogged = Number(/worst since start (\d+) ms/.exec(debug.mock.calls.at(-1)?.[0])?.[1]);
      expect(worstLogged).toBeGreaterThanOrEqual(600);
    } finally {
      watch.stop();
    }
  });
});
