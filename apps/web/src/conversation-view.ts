/**
 * Draws the open conversation, the present or the version the timeline picked: its title, the
 * spoiler guard, the messages, the past banner and which controls are usable.
 */
import type { Chapter } from './api';
import { renderBooks } from './book-list';
import { renderConversations } from './conversation-list';
import { el, byId } from './dom';
import { renderItems } from './messages';
import { state } from './state';
import { renderTimeline } from './timeline-list';

export function renderOpenConversation(): void {
  const open = state.open;
  if (!open) return;
  const view = open.log.view(open.past ?? Infinity);
  const title = view.title ?? 'Untitled conversation';
  byId('chat-title').textContent = title;
  document.title = `${title} · Parley`;
  renderReadingPosition(view.bookId, view.readingPosition);
  const listed = state.conversations.find((c) => c.id === open.id);
  if (
    listed &&
    open.past === undefined &&
    open.log.lastVersion > 0 &&
    (listed.title !== view.title || listed.bookId !== view.bookId)
  ) {
    listed.title = view.title; // the list is a read model that can trail the events
    listed.bookId = view.bookId;
    renderConversations();
  }
  if (view.bookId && view.bookId !== state.selectedBook && state.books.some((b) => b.id === view.bookId)) {
    state.selectedBook = view.bookId; // the sidebar shows the book of the open conversation
    renderBooks();
  }
  renderItems(view.items);
  const past = open.past !== undefined;
  byId('past-banner').hidden = !past;
  if (past) byId('past-text').textContent = `You are looking at version ${open.past} of ${open.log.lastVersion}.`;
  for (const id of ['composer-input', 'send', 'reading-position', 'rename', 'delete']) {
    (byId(id) as HTMLButtonElement).disabled = past || view.deleted;
  }
  const cancel = byId('cancel-turn');
  cancel.hidden = past || view.openTurns.length === 0;
  if (!byId('timeline').hidden) renderTimeline();
}

/** The spoiler guard's choices: the book's chapters, and the position set if it names none of them. */
function renderReadingPosition(bookId: string | null, position: number | null): void {
  const select = byId('reading-position') as HTMLSelectElement;
  const chapters: Chapter[] = state.books.find((b) => b.id === bookId)?.chapters ?? [];
  const sig = `${bookId}:${chapters.length}:${position}`;
  if (select.dataset.sig === sig) return;
  select.dataset.sig = sig;
  const options = [el('option', { value: '' }, 'Whole book (no limit)')];
  for (const c of chapters) options.push(el('option', { value: String(c.index) }, `Up to ${c.title}`));
  if (position !== null && !chapters.some((c) => c.index === position)) {
    options.push(el('option', { value: String(position) }, `Read up to chapter ${position}`));
  }
  select.replaceChildren(...options);
  select.value = position === null ? '' : String(position);
}
