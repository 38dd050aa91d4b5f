/**
 * Server-sent events over fetch, in Node and in browsers alike: one async iterator of frames
 * across reconnects. A dropped connection (a network error, a server that closed, a 5xx, 408 or
 * 429) is opened again after the server's `retry:` delay with `Last-Event-ID` set to the last
 * frame's id, as the SSE standard's EventSource does; a refusal (any other 4xx) throws a
 * ParleyApiError. Unlike EventSource it sends headers (a bearer token) and hands over every frame
 * whatever its event name.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ParleyApiError } from './problems';

export type SseFrame = EventSourceMessage;

/** What the stream tells as its connection comes and goes. */
export type StreamStatus = 'open' | 'reconnecting';

export interface SseOptions {
  url: string;
  headers: () => Record<string, string>;
  fetch: typeof globalThis.fetch;
  /** resume after this frame id (sent as Last-Event-ID on the first request too) */
  lastEventId?: string;
  /** the wait before reconnecting until the server sends its own `retry:` (ms) */
  retryMs: number;
  signal: AbortSignal;
  onStatus?: (status: StreamStatus, error?: unknown) => void;
}

/** Refusals that reconnecting cannot change; a 408 or 429 is a moment's trouble, retried like a 5xx. */
const refusesForGood = (status: number) => status >= 400 && status < 500 && status !== 408 && status !== 429;

/** Every frame after `lastEventId`, reconnecting until `signal` aborts (then it ends quietly) or a refusal (it throws). */
export async function* sseFrames(o: SseOptions): AsyncGenerator<SseFrame> {
  let lastEventId = o.lastEventId;
  let retryMs = o.retryMs;
  while (!o.signal.aborted) {
    const frames: SseFrame[] = [];
    const parser = createParser({
      onEvent: (frame) => frames.push(frame),
      onRetry: (ms) => (retryMs = ms),
    });
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream', ...o.headers() };
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      const response = await o.fetch(o.url, { headers, signal: o.signal, cache: 'no-store' });
      if (!response.ok) {
        const body = await readBody(response);
        if (refusesForGood(response.status)) throw new ParleyApiError(response.status, body);
        throw new Error(`HTTP ${response.status}`);
      }
      if (!response.body) throw new Error('the answer has no body');
      o.onStatus?.('open');
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
        // hand frames over one by one, so that the resume point moves only past frames taken
        while (frames.length) {
          const frame = frames.shift()!;
          if (frame.id !== undefined) lastEventId = frame.id;
          yield frame;
        }
      }
      o.onStatus?.('reconnecting');
    } catch (e) {
      if (e instanceof ParleyApiError) throw e;
      if (o.signal.aborted) return;
      o.onStatus?.('reconnecting', e);
    }
    await sleep(retryMs, o.signal);
  }
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => '');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
