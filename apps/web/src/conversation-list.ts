/** The sidebar's conversations (links to `#c=<id>`), and starting a new one about the selected book. */
import { el, byId } from './dom';
import { api, state } from './state';
import { toast } from './toast';

export function refreshConversationsSoon(): void {
  clearTimeout(state.timers.refreshConversations);
  state.timers.refreshConversations = window.setTimeout(() => void refreshConversations(), 600);
}

export async function refreshConversations(): Promise<void> {
  try {
    const items = (await api.conversations()).items;
    // the list is a read model that can trail: keep one just opened until it shows up
    const open = state.open;
    if (open && !open.closed && !items.some((c) => c.id === open.id)) {
      const v = open.log.view();
      items.unshift({
        id: open.id,
        bookId: v.bookId,
        title: v.title,
        version: open.log.lastVersion,
        lastActivityAt: '',
      });
    }
    state.conversations = items;
  } catch (e) {
    return toast(e);
  }
  renderConversations();
}

export function renderConversations(): void {
  byId('conversation-list').replaceChildren(
    ...state.conversations.map((c) => {
      const current = state.open?.id === c.id;
      const a = el(
        'a',
        { href: `#c=${c.id}`, class: 'item', ...(current ? { 'aria-current': 'page' } : {}) },
        el('span', { class: 'item-title' }, c.title ?? 'Untitled conversation'),
        el('span', { class: 'item-sub' }, bookTitle(c.bookId)),
      );
      return el('li', {}, a);
    }),
  );
}

function bookTitle(id: string | null): string {
  if (!id) return 'no book';
  return state.books.find((b) => b.id === id)?.title ?? 'a book';
}

async function newConversation(): Promise<void> {
  const book = state.books.find((b) => b.id === state.selectedBook && b.status === 'ready');
  if (!book) return toast('Upload a book or pick a ready one first.');
  try {
    const c = await api.startConversation(book.id, `About ${book.title}`.slice(0, 200));
    location.hash = `c=${c.id}`;
  } catch (e) {
    toast(e);
  }
}

export function wireConversationList(): void {
  byId('new-conversation').addEventListener('click', () => void newConversation());
}
