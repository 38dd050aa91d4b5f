/**
 * Draws the messages of the open conversation: questions, answers with their tool calls
 * (collapsed) and the calls waiting for the reader's approval, citations and sources, notes, and
 * the fork buttons. A message is drawn again only when it changed, so an expanded tool call or a
 * selection survives the next text delta; the focus in a message drawn again goes to the same
 * control in the new drawing.
 */
import { approvalCard } from './approvals';
import { el, byId } from './dom';
import { fork } from './fork';
import { type Item, type Passage, type ToolCall, waiting, where } from './model';
import { showPassage } from './passage';
import { state } from './state';

export function renderItems(items: Item[]): void {
  const list = byId('messages');
  const nearBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 80;
  const nodes: HTMLElement[] = [];
  const past = state.open?.past !== undefined;
  for (const item of items) {
    // an ended turn, a question or a note never changes: only the open turns are compared whole
    const sig =
      (item.kind === 'assistant' && item.status === 'working'
        ? JSON.stringify(item)
        : `${item.key}:${item.kind === 'assistant' ? item.status : ''}`) + (past ? ':past' : '');
    let cached = state.rendered.get(item.key);
    if (!cached || cached.sig !== sig) {
      cached = { sig, node: renderItem(item, past) };
      state.rendered.set(item.key, cached);
    }
    nodes.push(cached.node);
  }
  const children = [...list.children];
  const focused = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  if (children.length !== nodes.length || nodes.some((n, i) => children[i] !== n)) list.replaceChildren(...nodes);
  if (focused && !focused.isConnected) refocus(focused);
  if (nearBottom) list.scrollTop = list.scrollHeight;
}

/** The control with the same id in the new drawing, or, when it is gone or off, the element it names home (its card). */
function refocus(old: HTMLElement): void {
  const again = old.id ? document.getElementById(old.id) : null;
  if (again && !(again as HTMLButtonElement).disabled) return again.focus();
  const home = old.dataset.home ? document.getElementById(old.dataset.home) : null;
  home?.focus();
}

function renderItem(item: Item, past: boolean): HTMLElement {
  if (item.kind === 'note') return el('li', { class: 'note', 'data-version': String(item.version) }, item.text);
  if (item.kind === 'user') {
    const li = el('li', { class: 'msg user', 'data-version': String(item.version) });
    li.append(el('h3', { class: 'sr-only' }, 'You'));
    if (item.selectedText) li.append(el('blockquote', { class: 'selected' }, item.selectedText));
    li.append(el('p', { class: 'text' }, item.content));
    // a fork before the question: the same conversation, ready for another question
    if (!past) li.append(forkButton(item.version - 1, 'Fork before this message'));
    return li;
  }
  const li = el('li', {
    class: `msg assistant ${item.status}`,
    'data-turn': item.turnId,
    'aria-busy': String(item.status === 'working'),
  });
  li.append(el('h3', { class: 'sr-only' }, 'Parley'));
  for (const tool of item.tools) li.append(toolDetails(tool));
  for (const a of item.approvals) li.append(approvalCard(a, item.turnId, item.key, item.status === 'working' && !past));
  // a whole-book answer has no search results: its [n] are its cited passages
  if (item.text) li.append(answerText(item.text, item.passages.length ? item.passages : item.cited));
  if (item.status === 'working') {
    li.append(
      el(
        'p',
        { class: 'working' },
        waiting(item).length
          ? 'waiting for your approval…'
          : item.text
            ? 'writing…'
            : item.tools.length
              ? 'reading the book…'
              : 'thinking…',
      ),
    );
  }
  if (item.status === 'cancelled') li.append(el('p', { class: 'ended' }, 'The answer was stopped.'));
  if (item.status === 'failed') li.append(el('p', { class: 'ended error' }, `The answer failed: ${item.error}`));
  if (item.cited.length) {
    const sources = el('ul', { class: 'sources', 'aria-label': 'Sources' });
    for (const p of item.cited) sources.append(el('li', {}, citeButton(p, `${p.n ? `[${p.n}] ` : ''}${where(p)}`)));
    li.append(sources);
  }
  if (item.version !== undefined && !past) li.append(forkButton(item.version, 'Fork after this answer'));
  return li;
}

function toolDetails(tool: ToolCall): HTMLElement {
  const input = tool.input as { query?: string } | undefined;
  const summary =
    tool.name === 'search_book' && input?.query ? `Searched the book for “${input.query}”` : `Used ${tool.name}`;
  const details = el('details', { class: `tool${tool.result?.isError ? ' error' : ''}` });
  details.open = state.openTools.has(tool.toolUseId);
  details.addEventListener('toggle', () => {
    if (details.open) state.openTools.add(tool.toolUseId);
    else state.openTools.delete(tool.toolUseId);
  });
  details.append(
    el('summary', {}, tool.result ? summary : `${summary}…`),
    el('pre', { class: 'tool-result' }, tool.result ? tool.result.content : 'waiting for the result'),
  );
  return details;
}

/** The answer with each `[n]` it cites as a button that opens the passage. */
function answerText(text: string, passages: Passage[]): HTMLElement {
  const p = el('div', { class: 'text' });
  let last = 0;
  for (const m of text.matchAll(/\[(\d+)\]/g)) {
    const passage = passages.find((x) => x.n === Number(m[1]));
    if (!passage) continue;
    p.append(text.slice(last, m.index));
    p.append(citeButton(passage, `[${passage.n}]`, `Passage ${passage.n}: ${where(passage)}`));
    last = m.index! + m[0].length;
  }
  p.append(text.slice(last));
  return p;
}

function citeButton(p: Passage, label: string, ariaLabel?: string): HTMLElement {
  const b = el('button', { type: 'button', class: 'cite', ...(ariaLabel ? { 'aria-label': ariaLabel } : {}) }, label);
  b.addEventListener('click', () => showPassage(p, b));
  return b;
}

function forkButton(version: number, label: string): HTMLElement {
  const b = el('button', { type: 'button', class: 'link fork' }, label);
  b.addEventListener('click', () => void fork(version));
  return b;
}
