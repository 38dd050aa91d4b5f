import { processReport } from './process-registry';

/** Polls `check` until it returns a truthy value; fails saying what it waited for. Never a bare sleep. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false | null> | T | undefined | false | null,
  timeoutMs = 10_000,
  everyMs = 25,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > until) {
      const processes = processReport();
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}` +
          (processes ? `\nthe stack's processes:\n${processes}` : ''),
      );
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
