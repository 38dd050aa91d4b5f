/**
 * Parley's two SSE streams as typed async iterators: a conversation's events with the reply's text
 * as it is written (docs/sse.md), and a book's reading progress until it is ready or has failed.
 */
import {
  isConversationEventType,
  STREAM_ENDING_TYPES,
  type ConversationEvent,
  type TextDeltaItem,
  type AssistantTextDelta,
} from './events';
import type { components } from './schema';
import { sseFrames, type SseFrame, type SseOptions, type StreamStatus } from './sse';

export type { StreamStatus };

export interface StreamOptions {
  /**
   * Start after this version: it is sent as `Last-Event-ID`, as a reconnect sends the last version
   * received (default: from the start, every stored event). Pass `stream.lastEventId` of an
   * earlier stream to go on where it stopped.
   */
  lastEventId?: number | string;
  /** stops the stream: the iteration then ends without an error (as `close()` does) */
  signal?: AbortSignal;
  /** told when the connection opens and when it dropped and is being opened again */
  onStatus?: (status: StreamStatus, error?: unknown) => void;
  /** the wait before a reconnect until the server sends its `retry:` delay (ms, default 2000) */
  retryMs?: number;
}

/** What a conversation's stream yields: each stored event once, in version order, and the live text deltas between them. */
export type ConversationStreamItem = ConversationEvent | TextDeltaItem;

export interface ConversationStream extends AsyncIterable<ConversationStreamItem> {
  /**
   * Settles once the server accepted the stream (or refused it: then it rejects as the iteration
   * throws). The connection opens when the stream is made, so a message posted after this is seen
   * live, its text deltas included.
   */
  readonly opened: Promise<void>;
  /** the version of the last event yielded (0 before any): a later stream resumes after it */
  readonly lastEventId: number;
  /** ends the stream: a `for await` over it finishes after the item it is on */
  close(): void;
}

export type Book = components['schemas']['BookDto'];
/** A book's progress as the ingestion reports it; the last one is `ready` or `failed`. */
export interface BookProgress {
  type: 'progress' | 'ready' | 'failed';
  book: Book;
}

export interface BookProgressStream extends AsyncIterable<BookProgress> {
  close(): void;
}

type Connection = Pick<SseOptions, 'headers' | 'fetch'> & { baseUrl: string };

/** GET /v1/conversations/{id}/stream, resumed with Last-Event-ID after every drop; ends after an erasure. */
export function streamConversation(c: Connection, id: string, options: StreamOptions = {}): ConversationStream {
  const stop = linkedAbort(options.signal);
  let last = Number(options.lastEventId ?? 0);
  let accepted!: { resolve(): void; reject(e: unknown): void };
  const opened = new Promise<void>((resolve, reject) => (accepted = { resolve, reject }));
  opened.catch(() => undefined); // a caller that never waits for it must not see an unhandled rejection
  async function* items(): AsyncGenerator<ConversationStreamItem> {
    const frames = sseFrames({
      ...connection(c, `/v1/conversations/${encodeURIComponent(id)}/stream`, options, stop.signal),
      onStatus: (status, error) => {
        if (status === 'open') accepted.resolve();
        options.onStatus?.(status, error);
      },
      lastEventId: options.lastEventId === undefined ? undefined : String(options.lastEventId),
    });
    try {
      for await (const frame of frames) {
        if (frame.event === 'AssistantTextDelta') {
          yield { type: 'AssistantTextDelta', data: parse<AssistantTextDelta>(frame) };
          continue;
        }
        // a type newer than this client is skipped (its version still moves the resume point)
        if (!frame.event || !isConversationEventType(frame.event)) continue;
        const event = parse<ConversationEvent>(frame);
        if (event.version <= last) continue; // a server that replayed one after a reconnect
        last = event.version;
        yield event;
        if (STREAM_ENDING_TYPES.includes(event.type)) return;
      }
    } catch (e) {
      accepted.reject(e);
      throw e;
    } finally {
      accepted.resolve(); // closed before it opened: nothing more to wait for
      stop.abort();
    }
  }
  const iterator = eager(items(), stop);
  return {
    [Symbol.asyncIterator]: () => iterator,
    opened,
    get lastEventId() {
      return last;
    },
    close: () => stop.abort(),
  };
}

/** GET /v1/books/{id}/events: the book's progress, ending with `ready` or `failed`. */
export function followBook(
  c: Connection,
  id: string,
  options: Omit<StreamOptions, 'lastEventId'> = {},
): BookProgressStream {
  const stop = linkedAbort(options.signal);
  async function* items(): AsyncGenerator<BookProgress> {
    try {
      for await (const frame of sseFrames(
        connection(c, `/v1/books/${encodeURIComponent(id)}/events`, options, stop.signal),
      )) {
        if (frame.event !== 'progress' && frame.event !== 'ready' && frame.event !== 'failed') continue;
        yield { type: frame.event, book: parse<Book>(frame) };
        if (frame.event !== 'progress') return;
      }
    } finally {
      stop.abort();
    }
  }
  const iterator = items();
  return { [Symbol.asyncIterator]: () => iterator, close: () => stop.abort() };
}

function connection(c: Connection, path: string, options: StreamOptions, signal: AbortSignal): SseOptions {
  return {
    url: `${c.baseUrl}${path}`,
    headers: c.headers,
    fetch: c.fetch,
    retryMs: options.retryMs ?? 2_000,
    signal,
    onStatus: options.onStatus,
  };
}

/**
 * The iterator with its first step already under way, so the connection opens when the stream is
 * made rather than when a loop first asks (stored events would be replayed anyway; live text
 * deltas sent before would be lost).
 */
function eager<T>(iterator: AsyncGenerator<T>, stop: AbortController): AsyncIterator<T> {
  let first: Promise<IteratorResult<T>> | undefined = iterator.next();
  first.catch(() => undefined); // thrown again to the loop that asks for it
  return {
    next: () => {
      const step = first ?? iterator.next();
      first = undefined;
      return step;
    },
    return: (value?: unknown) => {
      first = undefined;
      stop.abort();
      return iterator.return(value as T);
    },
  };
}

/** An AbortController that also aborts when the caller's signal does. */
function linkedAbort(outer?: AbortSignal): AbortController {
  const controller = new AbortController();
  if (outer?.aborted) controller.abort();
  else outer?.addEventListener('abort', () => controller.abort(), { once: true });
  return controller;
}

function parse<T>(frame: SseFrame): T {
  return JSON.parse(frame.data) as T;
}
