/**
 * The conversation as the page shows it, folded from its events (docs/events.md) and the live
 * AssistantTextDelta frames. Pure: no DOM, so the same fold serves the live view and the
 * timeline's view of an earlier version.
 */
import type { AssistantTextDelta, Schemas } from '@parley/client';

export interface EventEnvelope {
  id: string;
  type: string;
  conversationId: string;
  version: number;
  occurredAt: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
}

export type TextDelta = AssistantTextDelta;
export type Citation = Schemas['Citation'];

/** A passage the agent found, numbered as the answer cites it ([n]), with its text when the tool result holds it. */
export interface Passage extends Citation {
  n: number;
  text: string;
}

export interface ToolCall {
  toolUseId: string;
  name: string;
  input: unknown;
  result?: { content: string; isError: boolean };
}

/** A tool call that waits for the reader's approval (ToolApprovalRequested), and the answer once there is one. */
export interface Approval {
  toolCallId: string;
  tool: string;
  input: unknown;
  /** ISO 8601: unanswered by then, it is declined */
  expiresAt?: string;
  decision?: { approved: boolean; by: 'reader' | 'timeout'; reason?: string };
}

export type Item =
  | { kind: 'user'; key: string; version: number; turnId: string; content: string; selectedText?: string }
  | {
      kind: 'assistant';
      key: string;
      turnId: string;
      /** the version of the event that ended the turn, once it ended */
      version?: number;
      status: 'working' | 'done' | 'failed' | 'cancelled';
      text: string;
      tools: ToolCall[];
      /** the calls of the turn that asked for the reader's approval, in the order they asked */
      approvals: Approval[];
      passages: Passage[];
      /** the passages the answer cites, in the order AssistantReplied lists them */
      cited: Passage[];
      error?: string;
    }
  | { kind: 'note'; key: string; version: number; text: string };

export interface ConversationView {
  title: string | null;
  bookId: string | null;
  readingPosition: number | null;
  deleted: boolean;
  items: Item[];
  /** turns posted and not yet ended */
  openTurns: string[];
}

/** The events of one conversation in version order, each once, plus the text streaming for its open turns. */
export class ConversationLog {
  readonly events: EventEnvelope[] = [];
  private readonly deltas = new Map<string, Map<number, { attempt: number; parts: string[] }>>();

  get lastVersion(): number {
    return this.events.length ? this.events[this.events.length - 1].version : 0;
  }

  /** Adds a stored event; false for one already held (a replay after a reconnect) or out of order. */
  add(e: EventEnvelope): boolean {
    if (e.version !== this.lastVersion + 1) return false;
    this.events.push(e);
    if (ENDINGS.has(e.type)) this.deltas.delete(e.data.turnId);
    return true;
  }

  /** Adds a live text piece of an open turn; pieces of an attempt superseded by a later one are dropped. */
  addDelta(d: TextDelta): void {
    if (this.events.some((e) => ENDINGS.has(e.type) && e.data.turnId === d.turnId)) return;
    let turn = this.deltas.get(d.turnId);
    if (!turn) this.deltas.set(d.turnId, (turn = new Map()));
    const it = turn.get(d.iteration);
    if (!it || d.attempt > it.attempt) turn.set(d.iteration, { attempt: d.attempt, parts: [] });
    const cur = turn.get(d.iteration)!;
    if (d.attempt < cur.attempt) return;
    cur.parts[d.index] = d.text;
  }

  /** The text streamed so far for a turn: each iteration's latest attempt, in order. */
  streamed(turnId: string): string {
    const turn = this.deltas.get(turnId);
    if (!turn) return '';
    return [...turn.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, it]) => it.parts.join(''))
      .join('\n\n');
  }

  /** The conversation after event `upTo` (all of it by default); live text only for the present. */
  view(upTo = Infinity): ConversationView {
    return fold(
      this.events.filter((e) => e.version <= upTo),
      upTo === Infinity ? (t) => this.streamed(t) : () => '',
    );
  }
}

export const ENDINGS = new Set(['AssistantReplied', 'TurnFailed', 'TurnCancelled']);

export function fold(events: EventEnvelope[], streamed: (turnId: string) => string = () => ''): ConversationView {
  const view: ConversationView = {
    title: null,
    bookId: null,
    readingPosition: null,
    deleted: false,
    items: [],
    openTurns: [],
  };
  const turns = new Map<string, Extract<Item, { kind: 'assistant' }>>();
  for (const e of events) {
    const d = e.data ?? {};
    const turn = d.turnId ? turns.get(d.turnId) : undefined;
    switch (e.type) {
      case 'ConversationStarted':
        view.title = d.title ?? null;
        view.bookId = d.bookId ?? null;
        view.readingPosition = d.readingPosition ?? null;
        if (d.forkedFrom)
          view.items.push(note(e, `Forked from another conversation at version ${d.forkedFrom.version}`));
        break;
      case 'ConversationRenamed':
        view.title = d.title;
        view.items.push(note(e, `Renamed to “${d.title}”`));
        break;
      case 'ReadingPositionChanged':
        view.readingPosition = d.readingPosition ?? null;
        view.items.push(
          note(
            e,
            d.readingPosition === null
              ? 'Reading position lifted: the whole book'
              : `Reading position: up to chapter ${d.readingPosition}`,
          ),
        );
        break;
      case 'UserMessagePosted': {
        view.items.push({
          kind: 'user',
          key: `u${e.version}`,
          version: e.version,
          turnId: d.turnId,
          content: d.content,
          ...(d.selectedText ? { selectedText: d.selectedText } : {}),
        });
        const a: Extract<Item, { kind: 'assistant' }> = {
          kind: 'assistant',
          key: `a-${d.turnId}`,
          turnId: d.turnId,
          status: 'working',
          text: '',
          tools: [],
          approvals: [],
          passages: [],
          cited: [],
        };
        turns.set(d.turnId, a);
        view.items.push(a);
        break;
      }
      case 'ToolInvoked':
        turn?.tools.push({ toolUseId: d.toolUseId, name: d.name, input: d.input });
        break;
      case 'ToolApprovalRequested':
        turn?.approvals.push({
          toolCallId: d.toolCallId,
          tool: d.tool,
          input: d.input,
          ...(d.expiresAt ? { expiresAt: d.expiresAt } : {}),
        });
        break;
      case 'ToolApprovalDecided': {
        const asked = turn?.approvals.find((a) => a.toolCallId === d.toolCallId);
        if (asked)
          asked.decision = {
            approved: Boolean(d.approved),
            by: d.by === 'timeout' ? 'timeout' : 'reader',
            ...(d.reason ? { reason: d.reason } : {}),
          };
        break;
      }
      case 'ToolResultRecorded': {
        const call = turn?.tools.find((t) => t.toolUseId === d.toolUseId);
        if (call) call.result = { content: String(d.content ?? ''), isError: Boolean(d.isError) };
        if (turn && Array.isArray(d.chunks))
          turn.passages.push(...passagesOf(d.content, d.chunks, d.citationStart ?? 1));
        break;
      }
      case 'AssistantReplied':
        if (turn) {
          turn.status = 'done';
          turn.version = e.version;
          turn.text = d.content;
          const cited = (d.citations ?? []) as Citation[];
          // a whole-book answer's citations come from the provider: [n] is their place, the text what was quoted
          turn.cited = cited.map(
            (c, i) =>
              turn.passages.find((p) => p.chunkId === c.chunkId) ?? {
                ...c,
                n: c.quote !== undefined ? i + 1 : 0,
                text: c.quote ?? '',
              },
          );
        }
        break;
      case 'TurnFailed':
        if (turn) {
          turn.status = 'failed';
          turn.version = e.version;
          turn.error = d.message ?? d.code ?? 'the answer failed';
        }
        break;
      case 'TurnCancelled':
        if (turn) {
          turn.status = 'cancelled';
          turn.version = e.version;
        }
        break;
      case 'ConversationDeleted':
      case 'ConversationErased':
        view.deleted = true;
        break;
    }
  }
  for (const t of turns.values()) {
    if (t.status !== 'working') continue;
    view.openTurns.push(t.turnId);
    t.text = streamed(t.turnId);
  }
  return view;
}

function note(e: EventEnvelope, text: string): Item {
  return { kind: 'note', key: `n${e.version}`, version: e.version, text };
}

/**
 * The passages of a search_book result: its content numbers them `[n] <where>\n<text>`, from
 * `first`, in the order of `chunks`.
 */
export function passagesOf(content: unknown, chunks: Citation[], first: number): Passage[] {
  const text = typeof content === 'string' ? content : '';
  const starts = chunks.map((_, i) => text.indexOf(`[${first + i}] `));
  return chunks.map((c, i) => {
    let body = '';
    if (starts[i] >= 0) {
      const end = starts.slice(i + 1).find((s) => s > starts[i]) ?? text.length;
      const block = text.slice(starts[i], end);
      const nl = block.indexOf('\n');
      body = nl >= 0 ? block.slice(nl + 1).trim() : '';
    }
    return { ...c, n: first + i, text: body };
  });
}

/** The approvals of a turn still waiting for the reader's answer. */
export function waiting(item: Extract<Item, { kind: 'assistant' }>): Approval[] {
  return item.status === 'working' ? item.approvals.filter((a) => !a.decision) : [];
}

/** "Chapter 1: Arrival · p. 3" */
export function where(c: Citation): string {
  return [c.chapter, c.section, c.page === null || c.page === undefined ? null : `p. ${c.page}`]
    .filter(Boolean)
    .join(' · ');
}

/** One line for the timeline. */
export function describe(e: EventEnvelope): string {
  const d = e.data ?? {};
  switch (e.type) {
    case 'ConversationStarted':
      return d.forkedFrom ? `started (forked at version ${d.forkedFrom.version})` : 'started';
    case 'ConversationRenamed':
      return `renamed “${d.title}”`;
    case 'ReadingPositionChanged':
      return d.readingPosition === null ? 'reading position lifted' : `reading position ${d.readingPosition}`;
    case 'UserMessagePosted':
      return `you: ${clip(d.content)}`;
    case 'ToolInvoked':
      return `${d.name} ${clip(JSON.stringify(d.input))}`;
    case 'ToolApprovalRequested':
      return `asks to use ${d.tool} ${clip(JSON.stringify(d.input))}`;
    case 'ToolApprovalDecided':
      return d.by === 'timeout'
        ? 'no answer in time: declined'
        : d.approved
          ? 'approved'
          : `declined${d.reason ? `: ${clip(d.reason)}` : ''}`;
    case 'ToolResultRecorded':
      return d.isError ? 'tool failed' : `tool result (${Array.isArray(d.chunks) ? d.chunks.length : 0} passages)`;
    case 'AssistantReplied':
      return `answer: ${clip(d.content)}`;
    case 'TurnFailed':
      return `failed: ${d.code}`;
    case 'TurnCancelled':
      return 'cancelled';
    default:
      return '';
  }
}

function clip(s: unknown, n = 60): string {
  const t = String(s ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  return t.length > n ? t.slice(0, n - 1) + '…' : t;
}
