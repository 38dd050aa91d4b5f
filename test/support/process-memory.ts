/**
 * Resident memory of the stack's processes, sampled from /proc (Linux): the api, the worker and
 * the worker's parser children, for the tests of hostile uploads.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Stack } from './stack';

export function rss(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))![1]) * 1024;
  } catch {
    return 0;
  }
}

/** The pids of a process's children (the worker's parser processes). */
export function children(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'latin1').trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/** Samples the RSS of the api, the worker and every parser child every 50 ms; peak per role. */
export function sampleMemory(stack: Stack) {
  const peak = { api: 0, worker: 0, parser: 0 };
  const parsers = new Set<number>();
  const api = stack.apis[0].child.pid!;
  const worker = stack.workers[0].child.pid!;
  const timer = setInterval(() => {
    peak.api = Math.max(peak.api, rss(api));
    peak.worker = Math.max(peak.worker, rss(worker));
    for (const child of children(worker)) {
      parsers.add(child);
      peak.parser = Math.max(peak.parser, rss(child));
    }
  }, 50);
  return { peak, parsers, stop: () => clearInterval(timer) };
}

/** Peaks in MiB, for a log line. */
export const inMiB = (peak: Record<string, number>) =>
  Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, Math.round(v / 1024 / 1024)]));
