/**
 * The open conversation's live stream over SSE, through the client's stream (which reconnects with
 * Last-Event-ID by itself): each event added once to its log (a replay after a reconnect is
 * dropped), the text deltas, the events kept for a reload, and what to do when it is refused.
 */
import { ParleyApiError } from '@parley/client';
import { ApiError } from './api';
import { dropCachedEvents, saveCachedEvents } from './cache';
import { refreshConversationsSoon } from './conversation-list';
import { renderOpenConversation } from './conversation-view';
import { byId } from './dom';
import { showSignIn } from './layout';
import type { EventEnvelope } from './model';
import { api, state, type OpenConversation } from './state';
import { toast } from './toast';

/** Follows the conversation's SSE stream from the last version held. */
export function connect(open: OpenConversation): void {
  if (open.closed) return;
  const stream = api.stream(open.id, {
    lastEventId: open.log.lastVersion,
    onStatus: (status) => setStreamStatus(status === 'open' ? 'live' : 'reconnecting…'),
  });
  open.stream = stream;
  setStreamStatus('connecting…');
  void (async () => {
    try {
      for await (const item of stream) {
        if (item.type === 'AssistantTextDelta') {
          open.log.addDelta(item.data);
          renderOpenConversation();
        } else added(open, item);
      }
    } catch (e) {
      if (!open.closed) refused(open, e);
    }
  })();
}

/** One stored event from the stream, into the log and onto the screen. */
function added(open: OpenConversation, e: EventEnvelope): void {
  if (!open.log.add(e)) return; // already held: a replay after a reconnect
  saveSoon(open);
  if (e.type === 'ConversationErased' || e.type === 'ConversationDeleted') {
    open.closed = true;
    open.stream?.close();
    dropCachedEvents(open.id);
    setStreamStatus('deleted');
  }
  if (['ConversationRenamed', 'AssistantReplied', 'ConversationDeleted', 'ConversationErased'].includes(e.type))
    refreshConversationsSoon();
  // a replay of old events is no news
  if (Date.now() - Date.parse(e.occurredAt) < 15_000) announce(e);
  renderOpenConversation();
}

/** The stream was refused (a 401, a 404, …): try again by hand, from the last version held, or say why not. */
function refused(open: OpenConversation, error: unknown): void {
  if (!(error instanceof ParleyApiError)) console.warn('the stream stopped', error);
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
}

/** Keeps the events for a reload, at most a few times a second (a replay brings many at once). */
function saveSoon(open: OpenConversation): void {
  if (state.timers.saveEvents !== undefined) return;
  state.timers.saveEvents = window.setTimeout(() => {
    state.timers.saveEvents = undefined;
    if (!open.closed) saveCachedEvents(open.id, open.log.events);
  }, 250);
}

/**
 * Tells screen readers that an answer ended, or that a tool call waits for their approval and how it
 * was answered (the streaming text itself is not read out piece by piece).
 */
function announce(e: EventEnvelope): void {
  const text =
    e.type === 'AssistantReplied'
      ? `Parley answered: ${String(e.data.content).slice(0, 300)}`
      : e.type === 'TurnFailed'
        ? `The answer failed: ${e.data.message ?? e.data.code}`
        : e.type === 'TurnCancelled'
          ? 'The answer was stopped.'
          : e.type === 'ToolApprovalRequested'
            ? `The agent asks to use ${e.data.tool}: approve or decline it in the answer.`
            : e.type === 'ToolApprovalDecided'
              ? approvalNews(e.data)
              : '';
  if (text) byId('announce').textContent = text;
}

function approvalNews(d: { approved: boolean; by: string; reason?: string }): string {
  if (d.by === 'timeout') return 'No answer in time: the tool call was declined.';
  return d.approved ? 'The tool call was approved.' : 'The tool call was declined.';
}

function setStreamStatus(text: string): void {
  byId('stream-status').textContent = text ? `Stream: ${text}` : '';
}
