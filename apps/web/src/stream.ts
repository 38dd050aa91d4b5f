/**
 * The open conversation's live stream over SSE: each event added once to its log (a replay after
 * a reconnect is dropped), the text deltas, the events kept for a reload, and reconnecting.
 */
import { CONVERSATION_EVENT_TYPES } from '@parley/api-client';
import { ApiError } from './api';
import { dropCachedEvents, saveCachedEvents } from './cache';
import { refreshConversationsSoon } from './conversation-list';
import { renderOpenConversation } from './conversation-view';
import { byId } from './dom';
import { showSignIn } from './layout';
import type { EventEnvelope, TextDelta } from './model';
import { api, state, type OpenConversation } from './state';
import { toast } from './toast';

/** Follows the conversation's SSE stream from the last version held; EventSource resumes with Last-Event-ID by itself. */
export function connect(open: OpenConversation): void {
  if (open.closed) return;
  const source = new EventSource(
    api.sseUrl(`/v1/conversations/${open.id}/stream`, { after: String(open.log.lastVersion) }),
  );
  open.source = source;
  setStreamStatus('connecting…');
  source.onopen = () => setStreamStatus('live');
  for (const type of CONVERSATION_EVENT_TYPES) {
    source.addEventListener(type, (m) => {
      const e = JSON.parse((m as MessageEvent).data) as EventEnvelope;
      if (!open.log.add(e)) return; // already held: a replay after a reconnect
      saveSoon(open);
      if (e.type === 'ConversationErased' || e.type === 'ConversationDeleted') {
        open.closed = true;
        source.close();
        dropCachedEvents(open.id);
        setStreamStatus('deleted');
      }
      if (['ConversationRenamed', 'AssistantReplied', 'ConversationDeleted', 'ConversationErased'].includes(e.type))
        refreshConversationsSoon();
      // a replay of old events is no news
      if (Date.now() - Date.parse(e.occurredAt) < 15_000) announce(e);
      renderOpenConversation();
    });
  }
  source.addEventListener('AssistantTextDelta', (m) => {
    open.log.addDelta(JSON.parse((m as MessageEvent).data) as TextDelta);
    renderOpenConversation();
  });
  source.onerror = () => {
    if (open.closed) return;
    if (source.readyState === EventSource.CONNECTING) {
      setStreamStatus('reconnecting…');
      return;
    }
    // closed for good (a 401, a 404, the API away): try again by hand, from the last version held
    setStreamStatus('disconnected; retrying…');
    open.reconnectTimer = window.setTimeout(() => {
      if (open.closed) return;
      void api
        .conversation(open.id)
        .then(() => connect(open))
        .catch((e: unknown) => {
          if (e instanceof ApiError && (e.status === 404 || e.status === 401)) {
            setStreamStatus(e.status === 404 ? 'this conversation no longer exists' : 'signed out');
            if (e.status === 404) {
              dropCachedEvents(open.id);
              toast('This conversation no longer exists.');
            }
            if (e.status === 401) showSignIn('Your token expired: sign in again.');
          } else connect(open);
        });
    }, 2000);
  };
}

/** Keeps the events for a reload, at most a few times a second (a replay brings many at once). */
function saveSoon(open: OpenConversation): void {
  if (state.timers.saveEvents !== undefined) return;
  state.timers.saveEvents = window.setTimeout(() => {
    state.timers.saveEvents = undefined;
    if (!open.closed) saveCachedEvents(open.id, open.log.events);
  }, 250);
}

/** Tells screen readers that an answer ended (the streaming text itself is not read out piece by piece). */
function announce(e: EventEnvelope): void {
  const text =
    e.type === 'AssistantReplied'
      ? `Parley answered: ${String(e.data.content).slice(0, 300)}`
      : e.type === 'TurnFailed'
        ? `The answer failed: ${e.data.message ?? e.data.code}`
        : e.type === 'TurnCancelled'
          ? 'The answer was stopped.'
          : '';
  if (text) byId('announce').textContent = text;
}

function setStreamStatus(text: string): void {
  byId('stream-status').textContent = text ? `Stream: ${text}` : '';
}
