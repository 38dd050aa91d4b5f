/**
 * Opening a conversation (from the address, `#c=<id>`: the events this tab kept first, then its
 * stream), closing it, and deleting it.
 */
import { refreshBooks } from './book-list';
import { dropCachedEvents, loadCachedEvents } from './cache';
import { setQuote } from './composer';
import { refreshConversations, refreshConversationsSoon, renderConversations } from './conversation-list';
import { renderOpenConversation } from './conversation-view';
import { byId } from './dom';
import { closeMenu, closePanel } from './layout';
import { ConversationLog } from './model';
import { api, state, type OpenConversation } from './state';
import { connect } from './stream';
import { toast } from './toast';

/** The conversation id in the address, if it names one. */
export function conversationInHash(): string | undefined {
  return /^#c=([0-9a-f-]{36})$/.exec(location.hash)?.[1];
}

export function closeConversation(): void {
  const open = state.open;
  if (!open) return;
  open.closed = true;
  open.stream?.close();
  clearTimeout(open.reconnectTimer);
  state.open = undefined;
  state.rendered.clear();
  byId('messages').replaceChildren();
}

export async function openConversation(id: string): Promise<void> {
  if (state.open?.id === id) return;
  closeConversation();
  closePanel('passage');
  closePanel('timeline');
  closeMenu();
  const log = new ConversationLog();
  // after a reload, the events already seen come from this tab's storage; the stream resumes after them
  for (const e of loadCachedEvents(id)) log.add(e);
  const open: OpenConversation = { id, log, closed: false };
  state.open = open;
  byId('empty').hidden = true;
  byId('conversation').hidden = false;
  setQuote(undefined);
  renderOpenConversation();
  connect(open);
  if (state.conversations.some((c) => c.id === id)) renderConversations();
  else void refreshConversations(); // just made (a fork, a new one): the list may not have it yet
  if (!state.books.length) await refreshBooks();
  byId('chat-title').focus();
}

async function deleteConversation(): Promise<void> {
  const open = state.open;
  if (!open) return;
  if (!confirm(`Delete “${open.log.view().title ?? 'this conversation'}”? This cannot be undone.`)) return;
  try {
    await api.remove(open.id);
  } catch (e) {
    return toast(e);
  }
  dropCachedEvents(open.id);
  closeConversation();
  state.conversations = state.conversations.filter((c) => c.id !== open.id);
  history.replaceState(null, '', location.pathname);
  byId('conversation').hidden = true;
  byId('empty').hidden = false;
  renderConversations();
  toast('The conversation was deleted.', 'info');
  refreshConversationsSoon();
  (byId('new-conversation') as HTMLButtonElement).focus();
}

export function wireConversation(): void {
  window.addEventListener('hashchange', () => {
    const id = conversationInHash();
    if (id && state.token) void openConversation(id);
  });
  byId('delete').addEventListener('click', () => void deleteConversation());
}
