/**
 * Time travel: the timeline panel, the conversation as it was after a picked event (the page
 * folds events 1..N, the API tells the title and counts then), forking from there, back to now.
 */
import { renderOpenConversation } from './conversation-view';
import { byId } from './dom';
import { fork } from './fork';
import { closePanel, openPanel } from './layout';
import { api, state } from './state';
import { renderTimeline } from './timeline-list';
import { toast } from './toast';

function openTimeline(): void {
  byId('timeline-toggle').setAttribute('aria-expanded', 'true');
  renderTimeline();
  openPanel('timeline');
}

async function travel(version: number): Promise<void> {
  const open = state.open;
  if (!open) return;
  if (version >= open.log.lastVersion) {
    open.past = undefined;
    renderOpenConversation();
    return;
  }
  try {
    // the server's fold of events 1..version: the title and reading position as they were
    const then = await api.conversation(open.id, version);
    open.past = version;
    renderOpenConversation();
    byId('past-text').textContent =
      `You are looking at version ${version} of ${open.log.lastVersion}: “${then.title ?? 'Untitled'}”, ` +
      `${then.messageCount} message${then.messageCount === 1 ? '' : 's'}, ` +
      `${then.readingPosition === null ? 'whole book' : `read up to chapter ${then.readingPosition}`}.`;
  } catch (e) {
    toast(e);
  }
}

export function wireTimeline(): void {
  byId('timeline-toggle').addEventListener('click', () => {
    if (byId('timeline').hidden) {
      closePanel('passage', false);
      openTimeline();
    } else closePanel('timeline');
  });
  byId('timeline-close').addEventListener('click', () => closePanel('timeline'));
  // one listener for the list's buttons, which are drawn again as events arrive
  byId('timeline-list').addEventListener('click', (e) => {
    const item = (e.target as HTMLElement).closest<HTMLElement>('button.tl-item');
    if (item) void travel(Number(item.dataset.version));
  });
  byId('past-exit').addEventListener('click', () => void travel(Infinity));
  byId('past-fork').addEventListener('click', () => {
    if (state.open?.past !== undefined) void fork(state.open.past);
  });
}
