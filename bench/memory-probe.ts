/**
 * Preloaded into the soak's service processes (`node -r dist/bench/memory-probe.js`): every
 * MEMORY_PROBE_MS (30 s) appends the process's memory as V8 and Node see it to
 * `$MEMORY_PROBE_FILE.<pid>.jsonl`, so a soak can tell what grows when RSS grows: the JS heap
 * (used, or only reserved), memory outside it (Buffers), or neither (the allocator, native code).
 * Bench-only: nothing in the service loads it.
 */
import { appendFileSync } from 'node:fs';

export interface MemorySample {
  at: number;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

const file = `${process.env.MEMORY_PROBE_FILE ?? '/tmp/memory-probe'}.${process.pid}.jsonl`;
const every = Number(process.env.MEMORY_PROBE_MS ?? 30_000);

setInterval(() => {
  const m = process.memoryUsage();
  const sample: MemorySample = {
    at: Date.now(),
    rss: m.rss,
    heapTotal: m.heapTotal,
    heapUsed: m.heapUsed,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
  };
  appendFileSync(file, JSON.stringify(sample) + '\n');
}, every).unref();
