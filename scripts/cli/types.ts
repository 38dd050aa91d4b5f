/**
 * The shapes the terminal client reads from the API, narrowed to the fields it prints. The
 * generated client's response types are being completed; until they cover every answer, these
 * say what the client relies on, and anything else in a body is ignored (as docs/events.md asks
 * of readers: new optional fields appear over time).
 */

export interface Chapter {
  index: number;
  title: string;
}

export interface Book {
  id: string;
  title: string;
  author: string | null;
  format: string;
  status?: 'ingesting' | 'ready' | 'failed';
  chapters: Chapter[];
  chunkCount: number;
  progress?: { phase: string; pagesDone?: number; pagesTotal?: number; chunksWritten: number; chunksTotal?: number };
  error?: { code: string; message: string };
  createdAt: string;
}

export interface Conversation {
  id: string;
  bookId: string | null;
  title: string | null;
  readingPosition: number | null;
  version: number;
  createdAt?: string;
  updatedAt?: string;
  lastActivityAt?: string;
  messageCount?: number;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface Citation {
  chunkId: string;
  chapter: string;
  chapterIndex?: number;
  section: string | null;
  page: number | null;
  score?: number;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
}

/** One stored event, as GET …/events and the SSE stream send it. `data` is read per type below. */
export interface EventEnvelope {
  id: string;
  type: string;
  conversationId: string;
  version: number;
  position: string;
  occurredAt: string;
  data: Record<string, unknown>;
  metadata: { userId: string; correlationId?: string; causationId?: string };
}

export interface UserMessagePosted {
  turnId: string;
  messageId: string;
  content: string;
  selectedText?: string;
}

export interface ToolInvoked {
  turnId: string;
  toolUseId: string;
  name: string;
  input: unknown;
  iteration: number;
  assistantText?: string;
  usage?: Usage;
}

export interface ToolResultRecorded {
  turnId: string;
  toolUseId: string;
  content: string;
  isError: boolean;
  chunks?: Citation[];
  citationStart?: number;
}

export interface AssistantReplied {
  turnId: string;
  content: string;
  model: string;
  usage: Usage;
  costUsd: number;
  citations: Citation[];
  iterations: number;
  latencyMs?: number;
}

export interface TurnFailed {
  turnId: string;
  code: string;
  message: string;
  retryable: boolean;
}

/** A live `AssistantTextDelta` frame: not an event, no version (docs/events.md). */
export interface TextDelta {
  turnId: string;
  iteration: number;
  attempt: number;
  index: number;
  text: string;
}

export const TURN_ENDINGS = ['AssistantReplied', 'TurnFailed', 'TurnCancelled'] as const;

/** The event's data read as its type's shape; callers switch on `type` first. */
export function dataOf<T>(e: EventEnvelope): T {
  return e.data as unknown as T;
}
