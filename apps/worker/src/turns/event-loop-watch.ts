import { Logger } from '@nestjs/common';
import { type ELDHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

const RESOLUTION_MS = 20;

/** What the watch reads of Node's event-loop delay histogram (a test hands it one it controls). */
export type DelayHistogram = Pick<ELDHistogram, 'enable' | 'disable' | 'reset' | 'max' | 'percentile'>;

/**
 * Watches how long this process's event loop goes without running its timers. The job locks are
 * renewed from a timer, so a stall longer than the lock's margin would let another worker take
 * the turns in hand (and pay for their model calls a second time). Logs each window at debug, and
 * warns when a stall came within `warnAboveMs` of that margin.
 */
export class EventLoopWatch {
  private timer?: NodeJS.Timeout;
  private worstMs = 0;

  constructor(
    private readonly logger: Logger,
    private readonly warnAboveMs: number,
    private readonly marginMs: number,
    private readonly everyMs = 5_000,
    private readonly histogram: DelayHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS }),
  ) {}

  start(): void {
    this.histogram.enable();
    this.timer = setInterval(() => this.report(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }

  /** The longest stall seen since start, in ms (including the ~20 ms sampling resolution). */
  get worst(): number {
    return Math.max(this.worstMs, this.histogram.max / 1e6);
  }

  private report(): void {
    const maxMs = Math.round(this.histogram.max / 1e6);
    const p99Ms = Math.round(this.histogram.percentile(99) / 1e6);
    this.histogram.reset();
    this.worstMs = Math.max(this.worstMs, maxMs);
    const line = `event loop delay over ${this.everyMs / 1000} s: p99 ${p99Ms} ms, max ${maxMs} ms (worst since start ${this.worstMs} ms)`;
    if (maxMs > this.warnAboveMs)
      this.logger.warn(`${line}; a stall past ${this.marginMs} ms lets another worker take this worker's turns`);
    else this.logger.debug(line);
  }
}
