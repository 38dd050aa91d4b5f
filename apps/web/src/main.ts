/**
 * The web chat page: sign in, books (upload with progress, ingest progress), conversations,
 * the chat streamed over SSE, citations and their passages, the spoiler guard, rename, delete,
 * fork, and the timeline (the conversation at any earlier version).
 */
import { Api, ApiError, type Book, type Chapter, type ConversationSummary } from './api';
import {
  ConversationLog,
  describe,
  type EventEnvelope,
  type Item,
  type Passage,
  type TextDelta,
  type ToolCall,
  where,
} from './model';
import { CONVERSATION_EVENT_TYPES } from '@parley/api-client';
import { $, el, byId } from './dom';
import { loadCachedEvents, saveCachedEvents, dropCachedEvents } from './cache';

const TOKEN_KEY = 'parley:token';

const base = location.origin;
let token: string | undefined = localStorage.getItem(TOKEN_KEY) ?? undefined;
const api = new Api(base, () => token);

interface Open {
  id: string;
  log: ConversationLog;
  source?: EventSource;
  /** the version shown by the timeline, or undefined for the present */
  past?: number;
  closed: boolean;
  reconnectTimer?: number;
}

const state = {
  books: [] as Book[],
  conversations: [] as ConversationSummary[],
  selectedBook: undefined as string | undefined,
  open: undefined as Open | undefined,
  quote: undefined as string | undefined,
  openTools: new Set<string>(),
  rendered: new Map<string, { sig: string; node: HTMLElement }>(),
};

// ---------- sign in ----------

function showSignIn(message = ''): void {
  byId('app').hidden = true;
  byId('signin').hidden = false;
  byId('signin-error').textContent = message;
}

async function signIn(t: string): Promise<void> {
  token = t.trim();
  try {
    await api.books();
  } catch (e) {
    token = undefined;
    showSignIn(e instanceof ApiError && e.status === 401 ? 'That token is not valid or has expired.' : errText(e));
    return;
  }
  localStorage.setItem(TOKEN_KEY, token);
  byId('signin').hidden = true;
  byId('app').hidden = false;
  byId('whoami').textContent = `signed in as ${userOf(token)}`;
  await Promise.all([refreshBooks(), refreshConversations()]);
  const fromHash = /^#c=([0-9a-f-]{36})$/.exec(location.hash)?.[1];
  if (fromHash) await openConversation(fromHash);
  else (byId('new-conversation') as HTMLButtonElement).focus();
}

function userOf(t: string): string {
  try {
    return JSON.parse(atob(t.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))).sub ?? 'someone';
  } catch {
    return 'someone';
  }
}

function signOut(): void {
  closeConversation();
  localStorage.removeItem(TOKEN_KEY);
  token = undefined;
  history.replaceState(null, '', location.pathname);
  showSignIn();
}

// ---------- books ----------

async function refreshBooks(): Promise<void> {
  try {
    state.books = (await api.books()).items;
  } catch (e) {
    return toast(e);
  }
  if (!state.selectedBook) state.selectedBook = state.books.find((b) => b.status === 'ready')?.id;
  renderBooks();
}

function renderBooks(): void {
  const list = byId('book-list');
  list.replaceChildren(
    ...state.books.map((b) => {
      const selected = b.id === state.selectedBook;
      const status =
        b.status === 'ready'
          ? `${b.chapters.length} chapter${b.chapters.length === 1 ? '' : 's'}`
          : b.status === 'failed'
            ? `failed: ${b.error?.message ?? ''}`
            : 'ingesting…';
      const button = el(
        'button',
        { type: 'button', class: 'item', 'aria-pressed': String(selected), disabled: b.status !== 'ready' },
        el('span', { class: 'item-title' }, b.title),
        el('span', { class: 'item-sub' }, status),
      );
      button.addEventListener('click', () => {
        state.selectedBook = b.id;
        renderBooks();
        renderConversations();
      });
      return el('li', {}, button);
    }),
  );
}

function bookTitle(id: string | null): string {
  if (!id) return 'no book';
  return state.books.find((b) => b.id === id)?.title ?? 'a book';
}

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
  const source = new EventSource(api.sseUrl(`/v1/books/${book.id}/events`));
  const progress = (e: MessageEvent) => {
    const b = JSON.parse(e.data) as Book;
    const p = b.progress;
    if (p?.chunksTotal) bar.value = p.chunksWritten / p.chunksTotal;
    label.textContent = `Reading ${b.title}: ${p?.phase ?? ''}`;
  };
  source.addEventListener('progress', progress);
  source.addEventListener('ready', (e) => {
    source.close();
    const b = JSON.parse((e as MessageEvent).data) as Book;
    bar.value = 1;
    label.textContent = `${b.title} is ready: ${b.chapters.length} chapter${b.chapters.length === 1 ? '' : 's'}.`;
    state.selectedBook = b.id;
    void refreshBooks().then(renderConversations);
  });
  source.addEventListener('failed', (e) => {
    source.close();
    const b = JSON.parse((e as MessageEvent).data) as Book;
    label.textContent = `${b.title} could not be read: ${b.error?.message ?? 'unknown error'}`;
    void refreshBooks();
  });
}

// ---------- conversations list ----------

let refreshTimer: number | undefined;
function refreshConversationsSoon(): void {
  clearTimeout(refreshTimer);
  refreshTimer = window.setTimeout(() => void refreshConversations(), 600);
}

async function refreshConversations(): Promise<void> {
  try {
    const items = (await api.conversations()).items;
    // the list is a read model that can trail: keep one just opened until it shows up
    const open = state.open;
    if (open && !open.closed && !items.some((c) => c.id === open.id)) {
      const v = open.log.view();
      items.unshift({
        id: open.id,
        bookId: v.bookId,
        title: v.title,
        version: open.log.lastVersion,
        lastActivityAt: '',
      });
    }
    state.conversations = items;
  } catch (e) {
    return toast(e);
  }
  renderConversations();
}

function renderConversations(): void {
  byId('conversation-list').replaceChildren(
    ...state.conversations.map((c) => {
      const current = state.open?.id === c.id;
      const a = el(
        'a',
        { href: `#c=${c.id}`, class: 'item', ...(current ? { 'aria-current': 'page' } : {}) },
        el('span', { class: 'item-title' }, c.title ?? 'Untitled conversation'),
        el('span', { class: 'item-sub' }, bookTitle(c.bookId)),
      );
      return el('li', {}, a);
    }),
  );
}

async function newConversation(): Promise<void> {
  const book = state.books.find((b) => b.id === state.selectedBook && b.status === 'ready');
  if (!book) return toast('Upload a book or pick a ready one first.');
  try {
    const c = await api.startConversation(book.id, `About ${book.title}`.slice(0, 200));
    location.hash = `c=${c.id}`;
  } catch (e) {
    toast(e);
  }
}

// ---------- one conversation ----------

function closeConversation(): void {
  const open = state.open;
  if (!open) return;
  open.closed = true;
  open.source?.close();
  clearTimeout(open.reconnectTimer);
  state.open = undefined;
  state.rendered.clear();
  byId('messages').replaceChildren();
}

async function openConversation(id: string): Promise<void> {
  if (state.open?.id === id) return;
  closeConversation();
  closePanel('passage');
  closePanel('timeline');
  closeMenu();
  const log = new ConversationLog();
  // after a reload, the events already seen come from this tab's storage; the stream resumes after them
  for (const e of loadCachedEvents(id)) log.add(e);
  const open: Open = { id, log, closed: false };
  state.open = open;
  byId('empty').hidden = true;
  byId('conversation').hidden = false;
  setQuote(undefined);
  render();
  connect(open);
  if (state.conversations.some((c) => c.id === id)) renderConversations();
  else void refreshConversations(); // just made (a fork, a new one): the list may not have it yet
  if (!state.books.length) await refreshBooks();
  byId('chat-title').focus();
}

/** Follows the conversation's SSE stream from the last version held; EventSource resumes with Last-Event-ID by itself. */
function connect(open: Open): void {
  if (open.closed) return;
  const source = new EventSource(
    api.sseUrl(`/v1/conversations/${open.id}/stream`, { after: String(open.log.lastVersion) }),
  );
  open.source = source;
  setStreamStatus('connecting…');
  source.onopen = () => setStreamStatus('live');
  for (const type of CONVERSATION_EVENT_TYPES) {
    source.addEventListener(type, (m) => {
      const e = JSON.parse((m as MessageEvent).data) as EventEnvelope;
      if (!open.log.add(e)) return; // already held: a replay after a reconnect
      saveSoon(open);
      if (e.type === 'ConversationErased' || e.type === 'ConversationDeleted') {
        open.closed = true;
        source.close();
        dropCachedEvents(open.id);
        setStreamStatus('deleted');
      }
      if (['ConversationRenamed', 'AssistantReplied', 'ConversationDeleted', 'ConversationErased'].includes(e.type))
        refreshConversationsSoon();
      // a replay of old events is no news
      if (Date.now() - Date.parse(e.occurredAt) < 15_000) announce(e);
      render();
    });
  }
  source.addEventListener('AssistantTextDelta', (m) => {
    open.log.addDelta(JSON.parse((m as MessageEvent).data) as TextDelta);
    render();
  });
  source.onerror = () => {
    if (open.closed) return;
    if (source.readyState === EventSource.CONNECTING) {
      setStreamStatus('reconnecting…');
      return;
    }
    // closed for good (a 401, a 404, the API away): try again by hand, from the last version held
    setStreamStatus('disconnected; retrying…');
    open.reconnectTimer = window.setTimeout(() => {
      if (open.closed) return;
      void api
        .conversation(open.id)
        .then(() => connect(open))
        .catch((e: unknown) => {
          if (e instanceof ApiError && (e.status === 404 || e.status === 401)) {
            setStreamStatus(e.status === 404 ? 'this conversation no longer exists' : 'signed out');
            if (e.status === 404) {
              dropCachedEvents(open.id);
              toast('This conversation no longer exists.');
            }
            if (e.status === 401) showSignIn('Your token expired: sign in again.');
          } else connect(open);
        });
    }, 2000);
  };
}

let saveTimer: number | undefined;
/** Keeps the events for a reload, at most a few times a second (a replay brings many at once). */
function saveSoon(open: Open): void {
  if (saveTimer !== undefined) return;
  saveTimer = window.setTimeout(() => {
    saveTimer = undefined;
    if (!open.closed) saveCachedEvents(open.id, open.log.events);
  }, 250);
}

/** Tells screen readers that an answer ended (the streaming text itself is not read out piece by piece). */
function announce(e: EventEnvelope): void {
  const text =
    e.type === 'AssistantReplied'
      ? `Parley answered: ${String(e.data.content).slice(0, 300)}`
      : e.type === 'TurnFailed'
        ? `The answer failed: ${e.data.message ?? e.data.code}`
        : e.type === 'TurnCancelled'
          ? 'The answer was stopped.'
          : '';
  if (text) byId('announce').textContent = text;
}

function setStreamStatus(text: string): void {
  byId('stream-status').textContent = text ? `Stream: ${text}` : '';
}

/** Draws the open conversation: the present, or the version the timeline picked. */
function render(): void {
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

let timelineSig = '';

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

function renderItems(items: Item[]): void {
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
  if (children.length !== nodes.length || nodes.some((n, i) => children[i] !== n)) list.replaceChildren(...nodes);
  if (nearBottom) list.scrollTop = list.scrollHeight;
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
  if (item.text) li.append(answerText(item.text, item.passages));
  if (item.status === 'working') {
    li.append(
      el('p', { class: 'working' }, item.text ? 'writing…' : item.tools.length ? 'reading the book…' : 'thinking…'),
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

async function fork(version: number): Promise<void> {
  const open = state.open;
  if (!open) return;
  try {
    const c = await api.fork(open.id, version);
    toast(`Forked at version ${version}.`, 'info');
    await refreshConversations();
    location.hash = `c=${c.id}`;
  } catch (e) {
    toast(e);
  }
}

// ---------- passage and selection ----------

let passageOpener: HTMLElement | undefined;
let shownPassage: Passage | undefined;

function showPassage(p: Passage, opener: HTMLElement): void {
  passageOpener = opener;
  shownPassage = p;
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
  const text = (selectionInPassage() || shownPassage?.text || '').slice(0, 5000);
  if (!text) return;
  setQuote(text);
  closePanel('passage', false);
  byId('composer-input').focus();
}

function setQuote(text: string | undefined): void {
  state.quote = text;
  byId('quote').hidden = !text;
  byId('quote-text').textContent = text ?? '';
}

// ---------- composer ----------

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

// ---------- header actions ----------

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
    render();
  }
}

async function deleteConversation(): Promise<void> {
  const open = state.open;
  if (!open) return;
  if (!confirm(`Delete “${open.log.view().title ?? 'this conversation'}”? This cannot be undone.`)) return;
  try {
    await api.remove(open.id);
  } catch (e) {
    return toast(e);
  }
  dropCachedEvents(open.id);
  closeConversation();
  state.conversations = state.conversations.filter((c) => c.id !== open.id);
  history.replaceState(null, '', location.pathname);
  byId('conversation').hidden = true;
  byId('empty').hidden = false;
  renderConversations();
  toast('The conversation was deleted.', 'info');
  refreshConversationsSoon();
  (byId('new-conversation') as HTMLButtonElement).focus();
}

// ---------- timeline (time travel) ----------

function renderTimeline(): void {
  const open = state.open;
  if (!open) return;
  const list = byId('timeline-list');
  const current = open.past ?? open.log.lastVersion;
  const sig = `${open.id}:${open.log.lastVersion}:${current}`;
  if (sig === timelineSig && list.childElementCount) return; // nothing new (a text delta)
  timelineSig = sig;
  list.replaceChildren(
    ...open.log.events.map((e) => {
      const b = el(
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
      );
      b.addEventListener('click', () => void travel(e.version));
      return el('li', {}, b);
    }),
  );
}

async function travel(version: number): Promise<void> {
  const open = state.open;
  if (!open) return;
  if (version >= open.log.lastVersion) {
    open.past = undefined;
    render();
    return;
  }
  try {
    // the server's fold of events 1..version: the title and reading position as they were
    const then = await api.conversation(open.id, version);
    open.past = version;
    render();
    byId('past-text').textContent =
      `You are looking at version ${version} of ${open.log.lastVersion}: “${then.title ?? 'Untitled'}”, ` +
      `${then.messageCount} message${then.messageCount === 1 ? '' : 's'}, ` +
      `${then.readingPosition === null ? 'whole book' : `read up to chapter ${then.readingPosition}`}.`;
  } catch (e) {
    toast(e);
  }
}

// ---------- panels, menu, toasts ----------

function openPanel(id: 'timeline' | 'passage'): void {
  byId(id).hidden = false;
  document.body.classList.add(`with-${id}`);
  if (id === 'timeline') {
    byId('timeline-toggle').setAttribute('aria-expanded', 'true');
    renderTimeline();
  }
  (byId(`${id}-close`) as HTMLButtonElement).focus();
}

function closePanel(id: 'timeline' | 'passage', restoreFocus = true): void {
  if (byId(id).hidden) return;
  byId(id).hidden = true;
  document.body.classList.remove(`with-${id}`);
  if (id === 'timeline') {
    byId('timeline-toggle').setAttribute('aria-expanded', 'false');
    if (restoreFocus) byId('timeline-toggle').focus();
  } else if (restoreFocus && passageOpener?.isConnected) passageOpener.focus();
}

function closeMenu(): void {
  document.body.classList.remove('menu-open');
  byId('menu-toggle').setAttribute('aria-expanded', 'false');
}

let toastTimer: number | undefined;
function toast(e: unknown, kind: 'error' | 'info' = 'error', showMs = 6000): void {
  const t = byId('toast');
  t.textContent = typeof e === 'string' ? e : errText(e);
  t.className = `toast ${kind}`;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = window.setTimeout(() => (t.hidden = true), showMs);
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// ---------- wiring ----------

function wire(): void {
  byId('token-form').addEventListener('submit', (e) => {
    e.preventDefault();
    void signIn((byId('token-input') as HTMLTextAreaElement).value);
  });
  byId('dev-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const userId = (byId('dev-user') as HTMLInputElement).value.trim();
    Api.devToken(base, userId).then(
      (t) => signIn(t),
      (err: unknown) => (byId('signin-error').textContent = errText(err)),
    );
  });
  byId('sign-out').addEventListener('click', signOut);
  byId('menu-toggle').addEventListener('click', () => {
    const open = document.body.classList.toggle('menu-open');
    byId('menu-toggle').setAttribute('aria-expanded', String(open));
  });

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

  byId('new-conversation').addEventListener('click', () => void newConversation());
  window.addEventListener('hashchange', () => {
    const id = /^#c=([0-9a-f-]{36})$/.exec(location.hash)?.[1];
    if (id && token) void openConversation(id);
  });

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
  byId('delete').addEventListener('click', () => void deleteConversation());

  byId('timeline-toggle').addEventListener('click', () => {
    if (byId('timeline').hidden) {
      closePanel('passage', false);
      openPanel('timeline');
    } else closePanel('timeline');
  });
  byId('timeline-close').addEventListener('click', () => closePanel('timeline'));
  byId('past-exit').addEventListener('click', () => void travel(Infinity));
  byId('past-fork').addEventListener('click', () => {
    if (state.open?.past !== undefined) void fork(state.open.past);
  });

  byId('passage-close').addEventListener('click', () => closePanel('passage'));
  byId('ask-selection').addEventListener('click', askAboutSelection);
  document.addEventListener('selectionchange', () => {
    if (!byId('passage').hidden) updateAskButton();
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

wire();
if (token) void signIn(token);
else showSignIn();
