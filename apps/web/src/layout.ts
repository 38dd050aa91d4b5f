/** Which parts of the page show: the sign-in screen or the app, the side panels, the phone menu. */
import { $, byId } from './dom';
import { state } from './state';

export type PanelId = 'timeline' | 'passage';

export function showSignIn(message = ''): void {
  byId('app').hidden = true;
  byId('signin').hidden = false;
  byId('signin-error').textContent = message;
}

export function showApp(): void {
  byId('signin').hidden = true;
  byId('app').hidden = false;
}

/** Shows a side panel and moves the focus into it (the timeline draws its list first: see openTimeline). */
export function openPanel(id: PanelId): void {
  byId(id).hidden = false;
  document.body.classList.add(`with-${id}`);
  (byId(`${id}-close`) as HTMLButtonElement).focus();
}

export function closePanel(id: PanelId, restoreFocus = true): void {
  if (byId(id).hidden) return;
  byId(id).hidden = true;
  document.body.classList.remove(`with-${id}`);
  if (id === 'timeline') {
    byId('timeline-toggle').setAttribute('aria-expanded', 'false');
    if (restoreFocus) byId('timeline-toggle').focus();
  } else if (restoreFocus && state.passageOpener?.isConnected) state.passageOpener.focus();
}

export function closeMenu(): void {
  document.body.classList.remove('menu-open');
  byId('menu-toggle').setAttribute('aria-expanded', 'false');
}

export function wireLayout(): void {
  byId('menu-toggle').addEventListener('click', () => {
    const open = document.body.classList.toggle('menu-open');
    byId('menu-toggle').setAttribute('aria-expanded', String(open));
  });
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape') return;
    if (!byId('passage').hidden) closePanel('passage');
    else if (!byId('timeline').hidden) closePanel('timeline');
    else if (document.body.classList.contains('menu-open')) closeMenu();
  });
  $('#sidebar').addEventListener('click', (e) => {
    if ((e.target as HTMLElement).closest('a.item')) closeMenu();
  });
}
