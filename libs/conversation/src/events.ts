/**
 * The conversation stream's events (docs/events.md). Type names are stored contracts: string
 * constants, never class names.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

export interface Citation {
  chunkId: string;
  /** the passage's book, in a conversation with several books */
  bookId?: string;
  chapter: string;
  chapterIndex?: number;
  section: string | null;
  page: number | null;
  score: number;
  /** the text the model quoted from the passage (whole-book answers, cited by the provider) */
  quote?: string;
  /**
   * Stored form only, never served: the answer quoted the whole passage, whose text is joined as
   * `quote` from the book when the log is read (absent once the passage is withdrawn).
   */
  quoted?: true;
}

export interface ConversationStarted {
  type: 'ConversationStarted';
  data: {
    ownerId: string;
    /** the first of `bookIds`, or null: what readers of events older than `bookIds` read */
    bookId: string | null;
    /** the conversation's books; absent on events written before several books (read `bookId`) */
    bookIds?: string[];
    title: string | null;
    readingPosition: number | null;
    forkedFrom?: { conversationId: string; version: number };
  };
}
/** How a turn finds the book's text (docs/books.md, "Retrieval modes"). */
export const RETRIEVAL_MODES = ['tools', 'always-retrieve', 'whole-book', 'auto'] as const;
export type RetrievalMode = (typeof RETRIEVAL_MODES)[number];
/** A conversation's own settings; a field left out follows the server's configuration. */
export interface ConversationPolicy {
  /** the model of the conversation's calls (LLM_MODEL otherwise) */
  model?: string;
  /** model calls a turn may make (AGENT_MAX_ITERATIONS otherwise, and never more) */
  maxIterations?: number;
  /**
   * the tool-use loop, search first and answer with the passages, the whole book up to the
   * reading position in the prompt, or `auto` (the whole book when it fits, else by what the
   * provider supports); LLM_RETRIEVAL_MODE otherwise
   */
  retrievalMode?: RetrievalMode;
  /** the token budget of a request's messages (AGENT_CONTEXT_TOKENS otherwise) */
  contextBudgetTokens?: number;
  /** appended to the system prompt */
  instructions?: string;
}
export interface PolicyChanged {
  type: 'PolicyChanged';
  /** the whole policy in force from this event on */
  data: { policy: ConversationPolicy };
}
/** The conversation's books from now on (the whole list), and their titles as the agent is told them. */
export interface SourcesChanged {
  type: 'SourcesChanged';
  data: { bookIds: string[]; books: Array<{ id: string; title: string }> };
}
export interface ConversationRenamed {
  type: 'ConversationRenamed';
  data: { title: string };
}
export interface ReadingPositionChanged {
  type: 'ReadingPositionChanged';
  data: { readingPosition: number | null };
}
export interface UserMessagePosted {
  type: 'UserMessagePosted';
  data: {
    messageId: string;
    turnId: string;
    content: string;
    selectedText?: string;
    /** a prompt of a batch: the batch and the conversation its BatchStarted is in */
    batch?: BatchLink;
    /**
     * The reader's monthly budget in USD when they asked (their token's, else the server's): the
     * worker holds each model call of the turn to it. Absent: none was set, or a post from before
     * it existed (the worker then holds it to BUDGET_USD_PER_MONTH).
     */
    budgetUsdPerMonth?: number;
    /**
     * The catalogue the reader's token named when they asked (its `parley_tenant`; '' the
     * deployment's own): the worker lets the turn read the conversation's books only as far as
     * this reader may read them now. Absent on posts made before 0.4 (read as they were then).
     */
    catalogue?: string;
  };
}

/**
 * How the model is reached for a batch's turns: the Messages API (answers in seconds), or the
 * provider's Message Batches API (half the price, answers within hours).
 */
export type BatchVia = 'messages' | 'message-batches';

/** What a batch prompt's UserMessagePosted says of its batch. */
export interface BatchLink {
  batchId: string;
  conversationId: string;
  /** absent: 'messages' (and on every prompt posted before the Message Batches API was offered) */
  via?: BatchVia;
}

/** One prompt of a batch: its turn, in this conversation (sequential) or in a fork of it (independent). */
export interface BatchItem {
  prompt: string;
  turnId: string;
  conversationId: string;
}
/** Prompts answered as one batch; each item's turn ends as any turn does. */
export interface BatchStarted {
  type: 'BatchStarted';
  data: {
    batchId: string;
    mode: 'sequential' | 'independent';
    items: BatchItem[];
    /** absent: 'messages' */
    via?: BatchVia;
  };
}
/** Every item of the batch has ended (written once, by the worker that saw the last one end, or a sweep). */
export interface BatchCompleted {
  type: 'BatchCompleted';
  data: { batchId: string; answered: number; failures: number };
}
export interface ToolInvoked {
  type: 'ToolInvoked';
  data: {
    turnId: string;
    toolUseId: string;
    name: string;
    input: unknown;
    iteration: number;
    /** all the text the model wrote in this call, on the first ToolInvoked of an iteration */
    assistantText?: string;
    /**
     * The call's blocks in the order the model wrote them (text, and tool_use by id), on the first
     * ToolInvoked of an iteration. Absent on events written before it existed: their text is
     * replayed before the tool calls.
     */
    assistantContent?: AssistantBlockRef[];
    /** the usage and model of the LLM call, on the first ToolInvoked of an iteration */
    usage?: Usage;
    model?: string;
    /**
     * true when that call went through the provider's Message Batches API (half the list price),
     * on the first ToolInvoked of an iteration. Absent: the streaming API at list price, as for
     * every event written before it existed.
     */
    batched?: boolean;
    /**
     * What that call cost in USD (its own usage at its model's price), on the first ToolInvoked of
     * an iteration, so the ledger bills each call when it was made. Absent on events written
     * before it existed: the ledger prices their usage at list price.
     */
    costUsd?: number;
  };
}

/** A block of an assistant message as recorded: text inline, a tool call by its id. */
export type AssistantBlockRef = { type: 'text'; text: string } | { type: 'tool_use'; toolUseId: string };
export interface ToolResultRecorded {
  type: 'ToolResultRecorded';
  data: {
    turnId: string;
    toolUseId: string;
    content: string;
    /**
     * Stored form only, never served: `content` with each passage named by its id, joined from the
     * book into `content` when the log is read (a withdrawn passage reads as a notice). Stored
     * `content` then holds only the words beside the passages.
     */
    contentParts?: Array<string | { passage: string }>;
    isError: boolean;
    chunks?: Citation[];
    /** the citation number of the first chunk (numbers are unique within a turn) */
    citationStart?: number;
  };
}
export interface AssistantReplied {
  type: 'AssistantReplied';
  data: {
    turnId: string;
    messageId: string;
    content: string;
    model: string;
    stopReason: string;
    usage: Usage;
    costUsd: number;
    citations: Citation[];
    isFromBook?: boolean;
    iterations: number;
    latencyMs: number;
    /**
     * The policy asked for `whole-book`, and the turn searched instead: why. Absent when the turn
     * read as asked (and on every answer written before 0.4).
     */
    searchedInstead?: SearchedInstead;
  };
}

/**
 * Why a `whole-book` turn searched: the books up to the reading position are larger than it may
 * send (WHOLE_BOOK_MAX_TOKENS, or what the model's window leaves beside the history), one of them
 * is not there for the reader (deleted, withdrawn, of a catalogue they no longer read, not ready),
 * or the model's provider takes no documents.
 */
export type SearchedInstead =
  | { reason: 'books_too_large'; bookTokens: number; limitTokens: number }
  | { reason: 'books_unavailable' }
  | { reason: 'provider_takes_no_documents' };
export interface TurnFailed {
  type: 'TurnFailed';
  data: { turnId: string; code: string; message: string; retryable: boolean };
}
export interface TurnCancelled {
  type: 'TurnCancelled';
  data: { turnId: string };
}
/**
 * Older turns summarised to fit the context budget, recorded by the turn that needed it before
 * its first model call. From this turn on, histories send the summary, then the turns posted
 * after `coversVersions[1]`. The summary replaces the one before it (it was part of the input).
 */
export interface HistorySummarized {
  type: 'HistorySummarized';
  data: {
    turnId: string;
    /** the conversation versions the summary stands for: the previous summary's first, and the last version cut */
    coversVersions: [number, number];
    summary: string;
    usage: Usage;
    model: string;
    costUsd: number;
  };
}
/**
 * The fallback when the summary call failed: the turns up to `droppedVersions[1]` are left out of
 * histories from this turn on, unsummarised; an earlier summary is still sent.
 */
export interface HistoryTrimmed {
  type: 'HistoryTrimmed';
  data: { turnId: string; droppedVersions: [number, number]; reason: string };
}
/**
 * A model call of a turn went to the provider's Message Batches API: `providerBatchId` is where
 * its answer will be. Recorded before the turn waits, so a worker that polls later (after a
 * deploy, a crash, Redis losing its jobs) fetches that answer instead of paying for another.
 */
export interface ModelBatchSubmitted {
  type: 'ModelBatchSubmitted';
  data: {
    turnId: string;
    /** the step of the turn the call is for (`<turnId>/<kind>/<iteration>`) */
    step: string;
    provider: string;
    providerBatchId: string;
  };
}
/**
 * A model call of the turn stopped before its end, yet billed: the input counted when its answer
 * began and the output streamed until it stopped. Not in the turn's AssistantReplied.usage; it
 * changes nothing else about the turn.
 */
export interface ModelCallStopped {
  type: 'ModelCallStopped';
  data: {
    turnId: string;
    /** the model call of the turn it was an attempt of (as in ToolInvoked.iteration) */
    iteration: number;
    model: string;
    usage: Usage;
    /** true when the call went through the Message Batches API (half the list price); absent: streamed */
    batched?: boolean;
    /** what the stopped call was billed in USD; absent on events written before it existed (priced at list price) */
    costUsd?: number;
    /** true when the provider stopped before it sent the usage (a Chat Completions stream): counted from the request and the text streamed */
    estimated?: true;
    /** cancelled by the reader; aborted otherwise (the worker stopping); broken: the stream failed midway */
    reason: 'cancelled' | 'aborted' | 'broken';
  };
}
/**
 * What an erasure leaves of a conversation (docs/erasure.md): its tombstone, the only event left
 * in its stream, content-free. `erasedEvents` is how many went (versions 1..erasedEvents);
 * `subject` is what the reader erased: this conversation, a book it had, or their account.
 */
export interface ConversationErased {
  type: 'ConversationErased';
  data: { erasedEvents: number; subject: ErasureSubject };
}
export type ErasureSubject = 'conversation' | 'book' | 'account';
/**
 * A catalogue book this conversation quoted was withdrawn by its publisher (docs/erasure.md): the
 * text of its passages was taken out of `redactedEvents` of this conversation's earlier events
 * (their tool results and answers' quotes). Content-free; a fold that held those events reads
 * the conversation anew.
 */
export interface PassagesWithdrawn {
  type: 'PassagesWithdrawn';
  data: { bookId: string; redactedEvents: number };
}
/** Written by releases before erasure; such a stream is erased by the worker's erasure sweep. */
export interface ConversationDeleted {
  type: 'ConversationDeleted';
  data: Record<string, never>;
}

/**
 * A token delta of the reply being written (the `event: AssistantTextDelta` SSE frame): live only,
 * never stored, no id; AssistantReplied holds the whole text.
 */
export interface AssistantTextDelta {
  turnId: string;
  /** the LLM call of the turn (1, 2, … as in ToolInvoked.iteration) */
  iteration: number;
  /** 1, or more when a call broken off midway was made again: drop the text of earlier attempts */
  attempt: number;
  /** 0, 1, … within one attempt of one call */
  index: number;
  text: string;
}

/**
 * A tool call of the turn waits for the reader's approval before it runs (a tool the operator
 * marked `approval`): the turn stops here, holding no worker, until ToolApprovalDecided.
 * `toolCallId` is the call's ToolInvoked.toolUseId. `expiresAt` (ISO 8601): when it is denied
 * unanswered (APPROVAL_TIMEOUT_MS); absent: it waits for ever.
 */
export interface ToolApprovalRequested {
  type: 'ToolApprovalRequested';
  data: { turnId: string; toolCallId: string; tool: string; input: unknown; expiresAt?: string };
}

/** What a client is told of a ToolApprovalRequested (MCP ask, the chat protocols, webhooks): the call, without the turn. */
export type ApprovalRequest = Omit<ToolApprovalRequested['data'], 'turnId'>;

export function approvalRequestOf({
  toolCallId,
  tool,
  input,
  expiresAt,
}: ToolApprovalRequested['data']): ApprovalRequest {
  return { toolCallId, tool, input, ...(expiresAt ? { expiresAt } : {}) };
}
/** The reader's answer to a ToolApprovalRequested, or its denial when it expired (`by: "timeout"`). */
export interface ToolApprovalDecided {
  type: 'ToolApprovalDecided';
  data: { turnId: string; toolCallId: string; approved: boolean; reason?: string; by: 'reader' | 'timeout' };
}

export type ConversationEvent =
  | ConversationStarted
  | ConversationRenamed
  | ReadingPositionChanged
  | PolicyChanged
  | SourcesChanged
  | UserMessagePosted
  | ToolInvoked
  | ToolResultRecorded
  | AssistantReplied
  | TurnFailed
  | TurnCancelled
  | HistorySummarized
  | HistoryTrimmed
  | ModelBatchSubmitted
  | ModelCallStopped
  | BatchStarted
  | BatchCompleted
  | PassagesWithdrawn
  | ToolApprovalRequested
  | ToolApprovalDecided
  | ConversationDeleted
  | ConversationErased;

export type ConversationEventType = ConversationEvent['type'];

export const CONVERSATION_EVENT_TYPES: readonly ConversationEventType[] = [
  'ConversationStarted',
  'ConversationRenamed',
  'ReadingPositionChanged',
  'PolicyChanged',
  'SourcesChanged',
  'UserMessagePosted',
  'ToolInvoked',
  'ToolResultRecorded',
  'AssistantReplied',
  'TurnFailed',
  'TurnCancelled',
  'HistorySummarized',
  'HistoryTrimmed',
  'ModelBatchSubmitted',
  'ModelCallStopped',
  'BatchStarted',
  'BatchCompleted',
  'PassagesWithdrawn',
  'ToolApprovalRequested',
  'ToolApprovalDecided',
  'ConversationDeleted',
  'ConversationErased',
];

const KNOWN_TYPES: ReadonlySet<string> = new Set(CONVERSATION_EVENT_TYPES);

/**
 * An event of a type this build knows. Readers of the whole log (projections, the dispatcher)
 * narrow with it; types a newer build wrote are not, and they skip those.
 */
export function isConversationEvent<T extends { type: string }>(event: T): event is T & ConversationEvent {
  return KNOWN_TYPES.has(event.type);
}

/** The events that end a turn: exactly one of them per UserMessagePosted. */
export const TURN_ENDING_TYPES: readonly ConversationEventType[] = ['AssistantReplied', 'TurnFailed', 'TurnCancelled'];

/** A ConversationStarted's books, also from events written before `bookIds` existed. */
export const startedBookIds = (data: ConversationStarted['data']): string[] =>
  data.bookIds ?? (data.bookId ? [data.bookId] : []);

/** Streams are named by category and id, so the log can hold other aggregates later. */
export const conversationStreamId = (conversationId: string): string => `conversation-${conversationId}`;
export const conversationIdOf = (streamId: string): string | undefined =>
  streamId.startsWith('conversation-') ? streamId.slice('conversation-'.length) : undefined;
