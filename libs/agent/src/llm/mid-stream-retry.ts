/** 1 s, 2 s, 4 s … with jitter, at most 16 s: an overloaded API needs a breath, not a hammering. */
export function midStreamBackoffMs(attempt: number): number {
  const base = Math.min(16_000, 1_000 * 2 ** (attempt - 1));
  return Math.round(base * (0.75 + Math.random() / 2));
}

/** Waits `ms`, or less when the signal aborts first (the caller then sees the abort itself). */
export function sleepUnlessAborted(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
