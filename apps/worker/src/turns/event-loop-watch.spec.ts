import { Logger } from '@nestjs/common';
import { EventLoopWatch } from './event-loop-watch';

const block = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    /* a synchronous stall */
  }
};
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('EventLoopWatch', () => {
  it('warns about a window whose stall passed the threshold, naming the lock margin, and keeps the worst', async () => {
    const logger = { warn: jest.fn(), debug: jest.fn() } as unknown as Logger;
    const watch = new EventLoopWatch(logger, 250, 2_500, 400);
    watch.start();
    try {
      await tick(50);
      block(600);
      await tick(400);
      expect(logger.warn).toHaveBeenCalledWith(
        expect.stringMatching(/max \d+ ms .*a stall past 2500 ms lets another worker take this worker's turns/),
      );
      expect(watch.worst).toBeGreaterThanOrEqual(600);
      await tick(450); // a quiet window: logged at debug only
      expect(logger.debug).toHaveBeenCalledWith(
        expect.stringMatching(/^event loop delay over 0.4 s: .*worst since start \d+ ms\)$/),
      );
    } finally {
      watch.stop();
    }
  });
});
