/**
 * Follows a conversation's SSE stream (docs/sse.md) through the client's `streamConversation`,
 * which reconnects by itself with Last-Event-ID (the last stored event's version; deltas carry no
 * id, so they never move that point) and hands each stored event over once, even when a server
 * replays one after a reconnect. Here: the chat's handlers, and a word to the user when the
 * connection stays down for a while.
 */
import { ParleyApiError } from '@parley/client';
import { apiError, unreachable, type Api } from './api';
import { CliError } from './errors';
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
  const { baseUrl } = api.target;
  let everOpened = false;
  let lostTimer: NodeJS.Timeout | undefined;
  let toldLost = false;
  let settle: { resolve(): void; reject(e: CliError): void };
  const opened = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  opened.catch(() => undefined); // a caller that stopped waiting must not see an unhandled rejection

  const stream = api.client.streamConversation(conversationId, {
    lastEventId: after,
    onStatus: (status, error) => {
      if (status === 'open') {
        clearTimeout(lostTimer);
        lostTimer = undefined;
        if (!everOpened) settle.resolve();
        else if (toldLost) h.onBack?.();
        everOpened = true;
        toldLost = false;
        return;
      }
      if (!everOpened) return fatal(unreachable(baseUrl, error ?? new Error('the stream closed')));
      // a network drop: the client retries after the server's `retry:` delay, with Last-Event-ID
      if (!lostTimer && !toldLost) {
        lostTimer = setTimeout(() => {
          toldLost = true;
          h.onLost?.();
        }, QUIET_RECONNECT_MS);
      }
    },
  });

  function fatal(e: CliError): void {
    stream.close();
    clearTimeout(lostTimer);
    if (!everOpened) settle.reject(e);
    else h.onFatal(e);
  }

  void (async () => {
    try {
      for await (const item of stream) {
        if (item.type === 'AssistantTextDelta') h.onDelta(item.data);
        else h.onEvent(item);
      }
    } catch (e) {
      if (e instanceof ParleyApiError) fatal(apiError(api.target, `conversation ${conversationId}`, e.status, e.body));
      else fatal(unreachable(baseUrl, e));
    }
  })();

  return {
    opened,
    lastVersion: () => stream.lastEventId,
    close: () => {
      clearTimeout(lostTimer);
      stream.close();
    },
  };
}
