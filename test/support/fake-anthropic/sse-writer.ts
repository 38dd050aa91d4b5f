/** Writes streaming events as server-sent-event frames, paced, stopping if the client leaves. */
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StreamEvent } from './render-reply';

export function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

/** Resolves true when every event was written, false when `signal` (client gone) cut it short. */
export async function writeSse(
  res: ServerResponse,
  events: StreamEvent[],
  delayMsPerChunk: number,
  signal: AbortSignal,
  breakOff?: { afterDeltas: number; type: string; message?: string },
): Promise<boolean> {
  let deltas = 0;
  for (const event of events) {
    if (event.type === 'content_block_delta') {
      if (breakOff && deltas++ === breakOff.afterDeltas) {
        const error = { type: breakOff.type, message: breakOff.message ?? 'Overloaded' };
        res.end(`event: error\ndata: ${JSON.stringify({ type: 'error', error })}\n\n`);
        return true;
      }
      if (delayMsPerChunk > 0) await sleep(delayMsPerChunk, undefined, { signal }).catch(() => undefined);
    }
    if (signal.aborted || res.destroyed) return false;
    res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  }
  res.end();
  return true;
}
