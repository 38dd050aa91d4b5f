/** The one-line message at the bottom of the page: an error (an alert) or a piece of news. */
import { byId } from './dom';
import { state } from './state';

export function toast(e: unknown, kind: 'error' | 'info' = 'error', showMs = 6000): void {
  const t = byId('toast');
  t.textContent = typeof e === 'string' ? e : errText(e);
  t.className = `toast ${kind}`;
  t.hidden = false;
  clearTimeout(state.timers.toast);
  state.timers.toast = window.setTimeout(() => (t.hidden = true), showMs);
}

export function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
