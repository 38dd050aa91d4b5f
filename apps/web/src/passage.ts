/**
 * The passage panel a citation opens, and asking about it: the words selected in it, or the
 * whole passage, become the quote the next message carries.
 */
import { setQuote } from './composer';
import { byId } from './dom';
import { closePanel, openPanel } from './layout';
import { type Passage, where } from './model';
import { state } from './state';

export function showPassage(p: Passage, opener: HTMLElement): void {
  state.passageOpener = opener;
  state.shownPassage = p;
  closePanel('timeline');
  byId('passage-h').textContent = p.n ? `Passage ${p.n}` : 'Passage';
  byId('passage-where').textContent = where(p);
  byId('passage-text').textContent = p.text || '(the text of this passage is not in the conversation)';
  updateAskButton();
  openPanel('passage');
}

function selectionInPassage(): string {
  const sel = document.getSelection();
  if (!sel || sel.isCollapsed || sel.rangeCount === 0) return '';
  const box = byId('passage-text');
  if (!box.contains(sel.getRangeAt(0).commonAncestorContainer)) return '';
  return sel.toString().trim();
}

function updateAskButton(): void {
  byId('ask-selection').textContent = selectionInPassage() ? 'Ask about the selected words' : 'Ask about this passage';
}

function askAboutSelection(): void {
  const text = (selectionInPassage() || state.shownPassage?.text || '').slice(0, 5000);
  if (!text) return;
  setQuote(text);
  closePanel('passage', false);
  byId('composer-input').focus();
}

export function wirePassage(): void {
  byId('passage-close').addEventListener('click', () => closePanel('passage'));
  byId('ask-selection').addEventListener('click', askAboutSelection);
  document.addEventListener('selectionchange', () => {
    if (!byId('passage').hidden) updateAskButton();
  });
}
