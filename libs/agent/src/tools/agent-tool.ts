import { Citation } from '@parley/conversation';

/** What a tool knows of the conversation it runs for. */
export interface ToolContext {
  userId: string;
  /**
   * the catalogue the reader's token named when they asked this turn ('' the deployment's own):
   * the books read are only those this reader may read now. null: a turn posted before 0.4, whose
   * books were each checked when they joined the conversation.
   */
  catalogue: string | null;
  conversationId: string;
  /** the first of `bookIds`, or null */
  bookId: string | null;
  /** the conversation's books: what a search covers */
  bookIds: string[];
  /** highest chapter index the reader has reached (inclusive); null = no limit */
  readingPosition: number | null;
  signal?: AbortSignal;
  /** the number of this call's first passage, so [n] is unique within a turn */
  citationStart?: number;
  /** passages an earlier search of the same turn already returned: left out of this one */
  excludeChunkIds?: readonly string[];
  /** the passages this turn's results numbered so far, by number: [n] is the chunk id numberedPassages.get(n) */
  numberedPassages?: ReadonlyMap<number, string>;
}

/** A piece of a tool result as the log keeps it: its own words inline, a book's passage by its id. */
export type ToolContentPart = string | { passage: string };

/** The parts as one text, each passage written as `textOf` gives it. */
export const joinParts = (parts: ToolContentPart[], textOf: (chunkId: string) => string): string =>
  parts.map((p) => (typeof p === 'string' ? p : textOf(p.passage))).join('');

export interface ToolOutput {
  /** the text the model reads as the tool_result */
  content: string;
  /**
   * `content` again, with each passage of a book named by its id instead of written out: what the
   * log keeps, so the book's text stays in the book (docs/event-store.md, "What is immutable").
   */
  contentParts?: ToolContentPart[];
  isError?: boolean;
  /** passages behind the result, numbered as the model may cite them ([n] = chunks[n-1]) */
  chunks?: Citation[];
}

/** A tool the agent may call. Registered in the ToolRegistry by name. */
export interface AgentTool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the input (type: object) */
  readonly inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
  /**
   * Whether a call waits for the reader's approval before it runs (ToolApprovalRequested): an
   * operator's tool that acts on the world. Absent: never (Parley's own reading tools).
   */
  readonly needsApproval?: boolean;
  /** where an operator's tool comes from: its MCP server and its name there; absent: one of Parley's own */
  readonly origin?: { server: string; tool: string };
  /** whether the tool applies to this conversation (search_book needs a book) */
  availableFor(ctx: ToolContext): boolean;
  run(input: unknown, ctx: ToolContext): Promise<ToolOutput>;
}

/** Nest multi-provider token: every AgentTool provider registers under it. */
export const AGENT_TOOLS = 'AGENT_TOOLS';
