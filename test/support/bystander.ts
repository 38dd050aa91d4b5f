import { clientFor } from './stack';

/** Pause between two of the bystander's requests: 20 ms, as bench:hostile's. */
const BYSTANDER_PAUSE_MS = 20;

/**
 * Another reader, served while a test or a bench loads the stack: GET /v1/conversations one after
 * another, BYSTANDER_PAUSE_MS apart, until `stop()`, which answers what came back (the statuses)
 * and how long each request took (ms).
 */
export function startBystander(base: string) {
  const client = clientFor(base, 'bystander');
  const latencies: number[] = [];
  const statuses = new Set<number>();
  let running = true;
  const done = (async () => {
    while (running) {
      const started = performance.now();
      statuses.add((await client.req('GET', '/v1/conversations')).status);
      latencies.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, BYSTANDER_PAUSE_MS));
    }
  })();
  return {
    stop: async (): Promise<{ latencies: number[]; statuses: number[] }> => {
      running = false;
      await done;
      return { latencies, statuses: [...statuses] };
    },
  };
}
