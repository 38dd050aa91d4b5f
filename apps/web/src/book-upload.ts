/**
 * Uploading a book, from the file picker or dropped on the upload box: a bar shows the upload,
 * then the ingestion followed over SSE, until the book is ready (and selected) or failed.
 */
import type { Book } from './api';
import { refreshBooks } from './book-list';
import { renderConversations } from './conversation-list';
import { byId } from './dom';
import { api, state } from './state';
import { errText, toast } from './toast';

async function uploadBook(file: File): Promise<void> {
  const status = byId('upload-status');
  const label = byId('upload-label');
  const bar = byId('upload-progress') as HTMLProgressElement;
  status.hidden = false;
  label.textContent = `Uploading ${file.name}…`;
  bar.value = 0;
  let book: Book;
  try {
    book = await api.upload(file, (f) => {
      bar.value = f;
      label.textContent = `Uploading ${file.name}: ${Math.round(f * 100)}%`;
    });
  } catch (e) {
    label.textContent = `Upload failed: ${errText(e)}`;
    toast(e);
    return;
  }
  label.textContent = `Reading ${book.title}…`;
  bar.value = 0;
  await refreshBooks();
  try {
    for await (const { type, book: b } of api.followBook(book.id)) {
      if (type === 'progress') {
        const p = b.progress;
        if (p?.chunksTotal) bar.value = p.chunksWritten / p.chunksTotal;
        label.textContent = `Reading ${b.title}: ${p?.phase ?? ''}`;
      } else if (type === 'ready') {
        bar.value = 1;
        label.textContent = `${b.title} is ready: ${b.chapters.length} chapter${b.chapters.length === 1 ? '' : 's'}.`;
        state.selectedBook = b.id;
        void refreshBooks().then(renderConversations);
      } else {
        label.textContent = `${b.title} could not be read: ${b.error?.message ?? 'unknown error'}`;
        void refreshBooks();
      }
    }
  } catch (e) {
    label.textContent = `Reading ${book.title}: ${errText(e)}`;
  }
}

export function wireUpload(): void {
  const fileInput = byId('file-input') as HTMLInputElement;
  fileInput.addEventListener('change', () => {
    const f = fileInput.files?.[0];
    if (f) void uploadBook(f);
    fileInput.value = '';
  });
  const drop = byId('drop');
  for (const type of ['dragenter', 'dragover']) {
    drop.addEventListener(type, (e) => {
      e.preventDefault();
      drop.classList.add('over');
    });
  }
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  // a file dropped beside the box must not make the browser leave the page to show it
  for (const type of ['dragover', 'drop']) window.addEventListener(type, (e) => e.preventDefault());
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    const f = (e as DragEvent).dataTransfer?.files?.[0];
    if (f) void uploadBook(f);
  });
}
