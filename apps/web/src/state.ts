/**
 * What the page holds, in one object every module imports: the signed-in token, the books and
 * conversations listed, the open conversation, and the timers that must not run twice.
 */
import type { ConversationStream } from '@parley/client';
import { Api, type Book, type ConversationSummary } from './api';
import type { ConversationLog, Passage } from './model';

/** The conversation on screen and its live stream. */
export interface OpenConversation {
  id: string;
  log: ConversationLog;
  stream?: ConversationStream;
  /** the version shown by the timeline, or undefined for the present */
  past?: number;
  closed: boolean;
  reconnectTimer?: number;
}

export const state = {
  token: undefined as string | undefined,
  books: [] as Book[],
  conversations: [] as ConversationSummary[],
  selectedBook: undefined as string | undefined,
  open: undefined as OpenConversation | undefined,
  /** the words the next message asks about (its selectedText) */
  quote: undefined as string | undefined,
  /** tool calls the reader expanded: they stay open when their message is drawn again */
  openTools: new Set<string>(),
  /** the reasons typed for declining, by tool call: they survive a redraw of their message */
  approvalReasons: new Map<string, string>(),
  /** tool calls whose answer the reader sent: their buttons stay off until the log has the answer */
  approvalsSent: new Set<string>(),
  /** each message's last drawing, redrawn only when its signature changes */
  rendered: new Map<string, { sig: string; node: HTMLElement }>(),
  shownPassage: undefined as Passage | undefined,
  /** the citation that opened the passage panel: focus goes back to it when the panel closes */
  passageOpener: undefined as HTMLElement | undefined,
  /** what the timeline list shows, so a text delta does not redraw it */
  timelineSig: '',
  timers: {
    refreshConversations: undefined as number | undefined,
    saveEvents: undefined as number | undefined,
    toast: undefined as number | undefined,
  },
};

export const base = location.origin;
export const api = new Api(base, () => state.token);
