import { Logger } from '@nestjs/common';
import { DelayHistogram, EventLoopWatch } from './event-loop-watch';

/** A delay histogram whose samples the test sets (ns, as Node's), reset by the watch at each window. */
function histogramOf(): DelayHistogram & { record(ms: number): void } {
  let samples: number[] = [];
  return {
    enable: () => true,
    disable: () => true,
    reset: () => void (samples = []),
    get max() {
      return samples.length ? Math.max(...samples) : 0;
    },
    percentile: (p: number) => [...samples].sort((a, b) => a - b)[Math.ceil((p / 100) * samples.length) - 1] ?? 0,
    record: (ms: number) => samples.push(ms * 1e6),
  };
}

describe(EventLoopWatch.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('warns about a window whose stall passed the threshold, naming the lock margin, and keeps the worst', () => {
    const logger = { warn: jest.fn(), debug: jest.fn() } as unknown as Logger;
    const warn = logger.warn as jest.Mock;
    const debug = logger.debug as jest.Mock;
    const histogram = histogramOf();
    const sut = new EventLoopWatch(logger, 250, 2_500, 400, histogram);
    sut.start();
    try {
      // a window with a 600 ms stall
      histogram.record(20);
      histogram.record(600);
      jest.advanceTimersByTime(400);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0][0]).toMatch(
        /^event loop delay over 0.4 s: p99 600 ms, max 600 ms \(worst since start 600 ms\); a stall past 2500 ms lets another worker take this worker's turns$/,
      );
      expect(sut.worst).toBe(600);
      // a quiet window after it: logged at debug only, still naming the worst stall
      histogram.record(30);
      jest.advanceTimersByTime(400);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(debug.mock.calls.at(-1)?.[0]).toBe(
        'event loop delay over 0.4 s: p99 30 ms, max 30 ms (worst since start 600 ms)',
      );
      expect(sut.worst).toBe(600);
    } finally {
      sut.stop();
    }
  });
});
