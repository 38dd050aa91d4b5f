import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { LiveDeltas } from '@parley/agent';
import {
  ApprovalRequest,
  approvalRequestOf,
  AssistantTextDelta,
  ToolInvoked,
  ToolResultRecorded,
} from '@parley/conversation';
import { AuthUser } from '../auth/auth-user';
import { ConversationReads } from '../conversations/conversation-reads.service';
import { MessagePosting } from '../conversations/message-posting.service';
import { TurnCancelling } from '../conversations/turn-cancelling';
import { NumberedCitation, noteNumbers, numbered } from '../mcp/mcp-ask';
import { TurnEnding, TurnFollower } from '../mcp/turn-follower';
import { AnswerText, TextSink } from './answer-text';

/** What a protocol does with a turn as it goes: its text blocks, its tool calls and their results. */
export interface TurnSink extends TextSink {
  toolCall(call: ToolInvoked['data']): void;
  toolResult(result: ToolResultRecorded['data']): void;
}

/** How a followed turn ended; `stopped` when the client left first (the turn may go on). */
export type TurnOutcome =
  | { status: 'answered'; messageId: string; content: string; citations: NumberedCitation[] }
  | { status: 'failed'; code: string; message: string }
  | { status: 'cancelled' | 'erased' | 'stopped' }
  /** the turn waits for the reader's approval of a tool call (POST …/turns/:turnId/approvals answers it) */
  | ({ status: 'approval_requested' } & ApprovalRequest);

/**
 * The chat protocols' one way into a turn (AI SDK, AG-UI): posted as POST …/messages posts it
 * (MessagePosting: budget, rate limit, idempotency, isolation), or the one in flight found, then
 * followed in the log as the MCP ask follows it (TurnFollower), with the live text deltas.
 * A stopping API ends its feeds without cancelling their turns, as /mcp does: the workers finish
 * them, and the client finds them in the log or resumes on another replica.
 */
@Injectable()
export class TurnFeed implements BeforeApplicationShutdown {
  private readonly stopping = new AbortController();

  constructor(
    private readonly posting: MessagePosting,
    private readonly reads: ConversationReads,
    private readonly follower: TurnFollower,
    private readonly deltas: LiveDeltas,
    private readonly cancelling: TurnCancelling,
  ) {}

  beforeApplicationShutdown(): void {
    this.stopping.abort(new Error('the API is stopping'));
  }

  /** Posts the reader's message; throws the post's problems (404, 400, 402, 429) before any stream starts. */
  async post(user: AuthUser, conversationId: string, content: string, idempotencyKey?: string): Promise<FeedTurn> {
    // subscribed before the post, so the first deltas of a fast turn are not missed
    const tap = new DeltaTap(this.deltas, conversationId);
    try {
      const posted = await this.posting.post(
        user,
        conversationId,
        { content, multitask: 'enqueue' },
        { idempotencyKey },
      );
      return new FeedTurn(user, conversationId, posted.turnId, posted.version, tap, this.parts());
    } catch (e) {
      tap.close();
      throw e;
    }
  }

  /** The reader's turn in flight in the conversation (the oldest one not ended), if any; 404 if not theirs. */
  async inFlight(user: AuthUser, conversationId: string): Promise<FeedTurn | undefined> {
    const tap = new DeltaTap(this.deltas, conversationId);
    const turn = (
      await this.reads.view(user.id, conversationId).catch((e) => {
        tap.close();
        throw e;
      })
    ).turns.find((t) => t.status === 'pending');
    if (!turn) {
      tap.close();
      return undefined;
    }
    // read from the start of the log: the turn's tool calls so far are replayed, its text completed at the end
    return new FeedTurn(user, conversationId, turn.turnId, 0, tap, this.parts());
  }

  private parts(): FeedParts {
    return { follower: this.follower, cancelling: this.cancelling, stopping: this.stopping.signal };
  }
}

/** What a FeedTurn follows and cancels with, and the signal of the API stopping. */
interface FeedParts {
  follower: TurnFollower;
  cancelling: TurnCancelling;
  stopping: AbortSignal;
}

/** A posted or found turn, to follow once. */
export class FeedTurn {
  constructor(
    private readonly user: AuthUser,
    readonly conversationId: string,
    readonly turnId: string,
    private readonly after: number,
    private readonly tap: DeltaTap,
    private readonly parts: FeedParts,
  ) {}

  /** Follows the turn into `sink` until it ends, or until `signal` aborts (then `stopped`). */
  async follow(sink: TurnSink, signal: AbortSignal): Promise<TurnOutcome> {
    const text = new AnswerText(this.turnId, sink);
    const numbers = new Map<string, number>(); // chunkId → the [n] the turn's searches gave it
    this.tap.attach((d) => text.delta(d));
    let ending: TurnEnding | undefined;
    try {
      ending = await this.parts.follower.follow(
        this.conversationId,
        this.turnId,
        this.after,
        (e) => {
          switch (e.type) {
            case 'ToolInvoked':
              text.callText(e.data.iteration, e.data.assistantText ?? '');
              return sink.toolCall(e.data);
            case 'ToolResultRecorded':
              noteNumbers(e.data, numbers);
              return sink.toolResult(e.data);
            case 'AssistantReplied':
              return text.answer(e.data.content, e.data.iterations);
          }
        },
        AbortSignal.any([signal, this.parts.stopping]),
      );
    } finally {
      this.tap.close();
      text.end();
    }
    if (!ending) return { status: 'stopped' };
    switch (ending.type) {
      case 'AssistantReplied':
        return {
          status: 'answered',
          messageId: ending.data.messageId,
          content: ending.data.content,
          citations: numbered(ending.data.citations, numbers),
        };
      case 'TurnFailed':
        return { status: 'failed', code: ending.data.code, message: ending.data.message };
      case 'TurnCancelled':
        return { status: 'cancelled' };
      case 'erased':
        return { status: 'erased' };
      case 'ToolApprovalRequested':
        return { status: 'approval_requested', ...approvalRequestOf(ending.data) };
    }
  }

  /**
   * Cancels the turn as POST …/turns/{turnId}/cancel does (a turn already ended is left as it
   * is); not when the API is stopping, whose clients lost their stream through no choice of theirs.
   */
  async cancel(): Promise<void> {
    if (this.parts.stopping.aborted) return;
    await this.parts.cancelling.cancel(this.user.id, this.conversationId, this.turnId);
  }

  /** Lets go of the live deltas when the turn is not followed after all. */
  close(): void {
    this.tap.close();
  }
}

/** The conversation's live deltas from now on, held until a follower attaches. */
class DeltaTap {
  private held: AssistantTextDelta[] | undefined = [];
  private to: ((d: AssistantTextDelta) => void) | undefined;
  private readonly stop: () => void;

  constructor(deltas: LiveDeltas, conversationId: string) {
    this.stop = deltas.subscribe(conversationId, (d: AssistantTextDelta) =>
      this.to ? this.to(d) : this.held?.push(d),
    );
  }

  attach(to: (d: AssistantTextDelta) => void): void {
    for (const d of this.held ?? []) to(d);
    this.held = undefined;
    this.to = to;
  }

  close(): void {
    this.stop();
    this.held = undefined;
    this.to = undefined;
  }
}
