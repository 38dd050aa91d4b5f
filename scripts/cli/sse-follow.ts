/**
 * Follows a conversation's SSE stream (docs/sse.md) with the `eventsource` package, which
 * reconnects by itself and sends Last-Event-ID: the last stored event's version. Deltas carry no
 * id, so they never move that point. Each stored event reaches the handler once, even if a
 * server replays one after a reconnect, because versions at or below the last one are dropped.
 */
import { EventSource } from 'eventsource';
import { CONVERSATION_EVENT_TYPES } from '@parley/api-client';
import { apiError, unreachable, type Api } from './api';
import type { CliError } from './errors';
import type { EventEnvelope, TextDelta } from './types';

export /** How long a dropped connection stays quiet before the user is told (most come back at once). */
const QUIET_RECONNECT_MS = 3_000;

export interface FollowHandlers {
  onEvent(e: EventEnvelope): void;
  onDelta(d: TextDelta): void;
  /** the stream cannot go on: the conversation is gone (404) or the token no longer works */
  onFatal(e: CliError): void;
  /** the connection has been down for a while (it keeps retrying), and when it is back */
  onLost?(): void;
  onBack?(): void;
}

export interface Follower {
  /** resolves once the server accepted the stream, so posts made afterwards are seen live */
  opened: Promise<void>;
  lastVersion(): number;
  close(): void;
}

export function followConversation(api: Api, conversationId: string, after: number, h: FollowHandlers): Follower {
  const { baseUrl, token } = api.target;
  const url = `${baseUrl}/v1/conversations/${encodeURIComponent(conversationId)}/stream?after=${after}`;
  let last = after;
  let everOpened = false;
  let lostTimer: NodeJS.Timeout | undefined;
  let toldLost = false;
  let settle: { resolve(): void; reject(e: CliError): void };
  const opened = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  opened.catch(() => undefined); // a caller that stopped waiting must not see an unhandled rejection

  const es = new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${token}` },
      }),
  });

  const fatal = (e: CliError) => {
    es.close();
    clearTimeout(lostTimer);
    if (!everOpened) settle.reject(e);
    else h.onFatal(e);
  };

  es.addEventListener('open', () => {
    clearTimeout(lostTimer);
    lostTimer = undefined;
    if (!everOpened) settle.resolve();
    else if (toldLost) h.onBack?.();
    everOpened = true;
    toldLost = false;
  });
  es.addEventListener('error', (ev) => {
    const code = (ev as { code?: number }).code;
    if (code !== undefined) return fatal(apiError(api.target, `conversation ${conversationId}`, code, undefined));
    if (!everOpened) return fatal(unreachable(baseUrl, new Error((ev as { message?: string }).message ?? 'stream')));
    // a network drop: EventSource retries after the server's `retry:` delay, with Last-Event-ID
    if (!lostTimer && !toldLost) {
      lostTimer = setTimeout(() => {
        toldLost = true;
        h.onLost?.();
      }, QUIET_RECONNECT_MS);
    }
  });

  for (const type of CONVERSATION_EVENT_TYPES) {
    es.addEventListener(type, (m: MessageEvent) => {
      const e = parse<EventEnvelope>(m.data);
      if (!e || typeof e.version !== 'number' || e.version <= last) return;
      last = e.version;
      h.onEvent(e);
    });
  }
  es.addEventListener('AssistantTextDelta', (m: MessageEvent) => {
    const d = parse<TextDelta>(m.data);
    if (d) h.onDelta(d);
  });

  return {
    opened,
    lastVersion: () => last,
    close: () => {
      clearTimeout(lostTimer);
      es.close();
    },
  };
}

function parse<T>(data: string): T | undefined {
  try {
    return JSON.parse(data) as T;
  } catch {
    return undefined;
  }
}
