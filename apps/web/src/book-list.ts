/**
 * The sidebar's books: the reader's own, then their tenant's catalogue under a heading of its
 * own, each with its status; the one selected is the book a new conversation is about.
 */
import { el, byId } from './dom';
import { renderConversations } from './conversation-list';
import { api, state } from './state';
import { toast } from './toast';

export async function refreshBooks(): Promise<void> {
  try {
    state.books = (await api.books()).items;
  } catch (e) {
    return toast(e);
  }
  if (!state.selectedBook) state.selectedBook = state.books.find((b) => b.status === 'ready')?.id;
  renderBooks();
}

export function renderBooks(): void {
  const own = state.books.filter((b) => b.visibility !== 'catalogue');
  const catalogue = state.books.filter((b) => b.visibility === 'catalogue');
  byId('book-list').replaceChildren(
    ...own.map(bookItem),
    ...(catalogue.length ? [el('li', { class: 'list-heading' }, 'Catalogue'), ...catalogue.map(bookItem)] : []),
  );
}

function bookItem(b: (typeof state.books)[number]): HTMLElement {
  const selected = b.id === state.selectedBook;
  const status =
    b.status === 'ready'
      ? `${b.chapters.length} chapter${b.chapters.length === 1 ? '' : 's'}`
      : b.status === 'failed'
        ? `failed: ${b.error?.message ?? ''}`
        : 'ingesting…';
  const button = el(
    'button',
    { type: 'button', class: 'item', 'aria-pressed': String(selected), disabled: b.status !== 'ready' },
    el('span', { class: 'item-title' }, b.title),
    el('span', { class: 'item-sub' }, status),
  );
  button.addEventListener('click', () => {
    state.selectedBook = b.id;
    renderBooks();
    renderConversations();
  });
  return el('li', {}, button);
}
