/** The open conversation's settings in its header: the title (rename) and the spoiler guard (reading position). */
import { renderOpenConversation } from './conversation-view';
import { byId } from './dom';
import { api, state } from './state';
import { toast } from './toast';

function startRename(): void {
  const form = byId('rename-form');
  const input = byId('rename-input') as HTMLInputElement;
  input.value = state.open?.log.view().title ?? '';
  form.hidden = false;
  byId('chat-title').hidden = true;
  input.focus();
  input.select();
}

function endRename(): void {
  byId('rename-form').hidden = true;
  byId('chat-title').hidden = false;
  byId('rename').focus();
}

async function rename(): Promise<void> {
  const open = state.open;
  const title = (byId('rename-input') as HTMLInputElement).value.trim();
  if (!open || !title) return;
  try {
    await api.update(open.id, { title });
    endRename();
  } catch (e) {
    toast(e);
  }
}

async function setReadingPosition(value: string): Promise<void> {
  const open = state.open;
  if (!open) return;
  try {
    await api.update(open.id, { readingPosition: value === '' ? null : Number(value) });
  } catch (e) {
    toast(e);
    renderOpenConversation(); // the guard shows the position held again
  }
}

export function wireSettings(): void {
  byId('rename').addEventListener('click', startRename);
  byId('rename-cancel').addEventListener('click', endRename);
  byId('rename-form').addEventListener('submit', (e) => {
    e.preventDefault();
    void rename();
  });
  byId('rename-form').addEventListener('keydown', (e) => {
    if ((e as KeyboardEvent).key === 'Escape') endRename();
  });
  byId('reading-position').addEventListener('change', (e) => {
    void setReadingPosition((e.target as HTMLSelectElement).value);
  });
}
