import { Inject, Injectable } from '@nestjs/common';
import { AppConfig, CONFIG } from '@parley/config';
import { LiveDeltas } from '@parley/agent';
import {
  ApprovalRequest,
  approvalRequestOf,
  AssistantTextDelta,
  Citation,
  ConversationEvent,
  ToolResultRecorded,
} from '@parley/conversation';
import { deterministicId, StoredEvent } from '@parley/event-store';
import { randomUUID } from 'node:crypto';
import { AuthUser } from '../auth/auth-user';
import { TITLE_MAX } from '../conversations/conversation.dto';
import { ConversationStarting } from '../conversations/conversation-starting';
import { TurnCancelling } from '../conversations/turn-cancelling';
import { MessagePosting } from '../conversations/message-posting.service';
import { describe } from '../http/http-exception.filter';
import { invalid } from '../http/problem.exception';
import { ConversationReads } from '../conversations/conversation-reads.service';
import { RateLimits } from '../rate-limits/rate-limits';
import { StreamSlots } from '../rate-limits/stream-slots';
import { ReaderBudget } from '../usage/reader-budget';
import { AskCancellations, AskRequest } from './ask-cancellations';
import { TurnFollower } from './turn-follower';

export interface AskInput {
  question: string;
  bookId?: string;
  conversationId?: string;
}

/** What an ask ended with; `following: false` when the request stopped before the turn ended. */
/** A cited passage, with the [n] the answer uses for it when the turn's search results said so. */
export type NumberedCitation = Citation & { n?: number };

export type AskOutcome =
  | { status: 'answered'; conversationId: string; turnId: string; answer: string; citations: NumberedCitation[] }
  | { status: 'failed'; conversationId: string; turnId: string; code: string; message: string }
  | { status: 'cancelled' | 'erased' | 'stopped following'; conversationId: string; turnId: string }
  /** the turn waits for the reader's approval of a tool call: POST …/turns/:turnId/approvals answers it */
  | ({ status: 'approval_requested'; conversationId: string; turnId: string } & ApprovalRequest);

export interface AskHooks {
  /** a line on how the turn goes (the tool sends it as a progress notification) */
  progress: (message: string) => void;
  /** aborted when the request ends before the turn (the client left, the API stops): the turn goes on */
  signal: AbortSignal;
}

/** At most one "writing the answer" progress a second, however fast the deltas come. */
const WRITING_PROGRESS_MS = 1_000;

/**
 * The `ask` tool's use case: a turn posted as POST /v1/conversations/{id}/messages posts it
 * (MessagePosting: the reader's budget, rate limit and isolation; the conversation's reading
 * position and policy apply in the worker), in a new conversation on `bookId` or in
 * `conversationId`, then followed in the log until it ends. Cancelling the MCP request cancels the
 * turn as POST …/turns/{turnId}/cancel does (see AskCancellations for how the cancel finds it).
 */
@Injectable()
export class McpAsk {
  constructor(
    private readonly starting: ConversationStarting,
    private readonly posting: MessagePosting,
    private readonly cancelling: TurnCancelling,
    private readonly follower: TurnFollower,
    private readonly deltas: LiveDeltas,
    private readonly cancellations: AskCancellations,
    private readonly budget: ReaderBudget,
    private readonly rateLimits: RateLimits,
    private readonly slots: StreamSlots,
    private readonly reads: ConversationReads,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async ask(user: AuthUser, input: AskInput, request: AskRequest, hooks: AskHooks): Promise<AskOutcome> {
    if (input.bookId && input.conversationId)
      throw invalid('conversationId', 'give bookId (a new conversation on that book) or conversationId, not both');
    // RATE_LIMIT_MCP_ASKS_PER_MIN, besides the post's and (on a book) the new conversation's limits
    await this.rateLimits.consume('mcpAsks', user.id);
    // following the turn holds the response open as GET …/stream does: one of the reader's stream slots
    const slot = await this.slots.take(user.id);
    try {
      return await this.askAndFollow(user, input, request, hooks);
    } finally {
      await slot.release();
    }
  }

  private async askAndFollow(
    user: AuthUser,
    input: AskInput,
    request: AskRequest,
    hooks: AskHooks,
  ): Promise<AskOutcome> {
    const conversationId = input.conversationId ?? (await this.start(user, input, request));
    let turnId: string | undefined;
    const numbers = new Map<string, number>(); // chunkId → the [n] the turn's searches gave it
    let written = 0;
    let lastWritingProgress = 0;
    // subscribed before the post, so the first deltas of a fast turn are not missed
    const stopDeltas = this.deltas.subscribe(conversationId, (d: AssistantTextDelta) => {
      if (d.turnId !== turnId) return;
      written += d.text.length;
      if (Date.now() - lastWritingProgress < WRITING_PROGRESS_MS) return;
      lastWritingProgress = Date.now();
      hooks.progress(`writing the answer (${written} characters so far)`);
    });
    try {
      const posted = await this.posting.post(
        user,
        conversationId,
        { content: input.question, multitask: 'enqueue' },
        { idempotencyKey: idempotencyKeyOf(request) },
      );
      turnId = posted.turnId;
      if (await this.cancellations.posted(request, { conversationId, turnId }))
        await this.cancelling.cancel(user.id, conversationId, turnId); // cancelled while it was being posted
      hooks.progress(`asked in conversation ${conversationId} (turn ${turnId})`);
      const ending = await this.follower.follow(
        conversationId,
        turnId,
        posted.version,
        (e) => {
          if (e.type === 'ToolResultRecorded') noteNumbers(e.data, numbers);
          const line = progressLine(e);
          if (line) hooks.progress(line);
        },
        hooks.signal,
      );
      const turn = { conversationId, turnId };
      if (!ending) return { status: 'stopped following', ...turn };
      switch (ending.type) {
        case 'AssistantReplied':
          return {
            status: 'answered',
            ...turn,
            answer: ending.data.content,
            citations: numbered(ending.data.citations, numbers),
          };
        case 'TurnFailed':
          return { status: 'failed', ...turn, code: ending.data.code, message: ending.data.message };
        case 'TurnCancelled':
          return { status: 'cancelled', ...turn };
        case 'erased':
          return { status: 'erased', ...turn };
        case 'ToolApprovalRequested':
          return { status: 'approval_requested', ...turn, ...approvalRequestOf(ending.data) };
      }
    } finally {
      stopDeltas();
    }
  }

  /** Whether this ask was cancelled by its client (not by someone else's POST …/cancel). */
  async cancelledByClient(request: AskRequest): Promise<boolean> {
    return this.cancellations.wasCancelled(request);
  }

  /** The cancel of an ask: TurnCancelled and the worker's signal, once its turn is known. */
  async cancel(user: AuthUser, request: AskRequest): Promise<void> {
    const turn = await this.cancellations.cancelled(request);
    if (turn) await this.cancelling.cancel(user.id, turn.conversationId, turn.turnId);
  }

  /**
   * The id of a new conversation on the book (or on none), titled with the question. The question
   * and the budget are checked first, as the post will check them: a refused ask leaves no empty
   * conversation. A retried request (same session, same JSON-RPC id) finds the conversation its
   * first try started, whose post then answers as the first did: one conversation, one turn.
   */
  private async start(user: AuthUser, input: AskInput, request: AskRequest): Promise<string> {
    if (input.question.trim().length === 0) throw invalid('question', 'question must not be blank');
    const max = this.config.limits.messageMaxChars;
    if (input.question.length > max) throw invalid('question', `question must be at most ${max} characters`);
    const key = idempotencyKeyOf(request);
    const id = key ? deterministicId('mcp-ask-conversation', user.id, key) : randomUUID();
    if (key && (await this.startedBy(user, id))) return id;
    await this.budget.assertWithin(user);
    const title = input.question.trim().replace(/\s+/g, ' ').slice(0, TITLE_MAX) || undefined;
    try {
      return (await this.starting.start(user.id, { bookId: input.bookId, title }, user.tenant, id)).id;
    } catch (e) {
      // the same request, retried while its first try was starting the conversation: that one stands
      if (key && describe(e).code === 'already_exists' && (await this.startedBy(user, id))) return id;
      throw e;
    }
  }

  /** Whether the reader's conversation `id` exists (one an earlier try of the same ask started). */
  private async startedBy(user: AuthUser, id: string): Promise<boolean> {
    return this.reads.view(user.id, id).then(
      () => true,
      () => false,
    );
  }
}

/**
 * A retried request (same client session, same JSON-RPC id) is the same post; a client that sent
 * no Mcp-Session-Id gets no key, since its ids are unique to nothing.
 */
function idempotencyKeyOf({ sessionId, requestId }: AskRequest): string | undefined {
  return sessionId ? `mcp:${sessionId}:${typeof requestId}:${requestId}` : undefined;
}

/** The answer's citations, each with the [n] the turn's searches gave its passage, where they did. */
export function numbered(citations: Citation[], numbers: Map<string, number>): NumberedCitation[] {
  return citations.map((c) => ({ ...c, ...(numbers.has(c.chunkId) ? { n: numbers.get(c.chunkId) } : {}) }));
}

/** Notes which [n] each passage of a search result had (numbers run on across a turn). */
export function noteNumbers(r: ToolResultRecorded['data'], numbers: Map<string, number>): void {
  if (r.citationStart === undefined) return;
  r.chunks?.forEach((c, i) => numbers.set(c.chunkId, r.citationStart! + i));
}

/** What a turn's event says to a reader watching it, if anything. */
function progressLine(e: StoredEvent<ConversationEvent>): string | undefined {
  switch (e.type) {
    case 'ToolInvoked': {
      const query = (e.data.input as { query?: unknown } | null)?.query;
      return e.data.name === 'search_book' && typeof query === 'string'
        ? `searching the book for "${query}"`
        : `calling ${e.data.name}`;
    }
    case 'ToolResultRecorded':
      return e.data.isError ? 'a tool call failed' : `found ${e.data.chunks?.length ?? 0} passages`;
    case 'HistorySummarized':
      return 'summarised the earlier turns';
    default:
      return undefined;
  }
}
