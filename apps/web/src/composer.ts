/** The message box: send a question (with the quote, if any), stop the answers still running. */
import { ApiError } from './api';
import { byId } from './dom';
import { api, state } from './state';
import { toast } from './toast';

export function setQuote(text: string | undefined): void {
  state.quote = text;
  byId('quote').hidden = !text;
  byId('quote-text').textContent = text ?? '';
}

async function send(): Promise<void> {
  const open = state.open;
  const input = byId('composer-input') as HTMLTextAreaElement;
  const content = input.value.trim();
  if (!open || !content) return;
  const button = byId('send') as HTMLButtonElement;
  button.disabled = true;
  try {
    await api.post(open.id, content, state.quote);
    input.value = '';
    setQuote(undefined);
  } catch (e) {
    // a spent budget holds until next month: leave the reader time to read when
    toast(e, 'error', e instanceof ApiError && e.code === 'budget_exceeded' ? 20_000 : undefined);
  } finally {
    button.disabled = false;
    input.focus();
  }
}

async function cancelTurns(): Promise<void> {
  const open = state.open;
  if (!open) return;
  for (const turnId of open.log.view().openTurns) {
    try {
      await api.cancel(open.id, turnId);
    } catch (e) {
      toast(e);
    }
  }
}

export function wireComposer(): void {
  byId('composer').addEventListener('submit', (e) => {
    e.preventDefault();
    void send();
  });
  byId('composer-input').addEventListener('keydown', (e) => {
    const k = e as KeyboardEvent;
    if (k.key === 'Enter' && !k.shiftKey && !k.isComposing) {
      e.preventDefault();
      void send();
    }
  });
  byId('cancel-turn').addEventListener('click', () => void cancelTurns());
  byId('quote-clear').addEventListener('click', () => {
    setQuote(undefined);
    byId('composer-input').focus();
  });
}
