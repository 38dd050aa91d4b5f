/** The timeline panel's list: every event of the open conversation, the one shown pressed. */
import { el, byId } from './dom';
import { describe } from './model';
import { state } from './state';

/** Draws the list again only when an event arrived or another version is shown (not for a text delta). */
export function renderTimeline(): void {
  const open = state.open;
  if (!open) return;
  const list = byId('timeline-list');
  const current = open.past ?? open.log.lastVersion;
  const sig = `${open.id}:${open.log.lastVersion}:${current}`;
  if (sig === state.timelineSig && list.childElementCount) return; // nothing new (a text delta)
  state.timelineSig = sig;
  list.replaceChildren(
    ...open.log.events.map((e) =>
      el(
        'li',
        {},
        el(
          'button',
          {
            type: 'button',
            class: 'tl-item',
            'aria-pressed': String(e.version === current),
            'data-version': String(e.version),
          },
          el('span', { class: 'tl-v' }, `v${e.version}`),
          el('span', { class: 'tl-type' }, e.type),
          el('span', { class: 'tl-desc' }, describe(e)),
          el('time', { datetime: e.occurredAt }, new Date(e.occurredAt).toLocaleTimeString()),
        ),
      ),
    ),
  );
}
