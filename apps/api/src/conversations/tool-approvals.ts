import { Injectable } from '@nestjs/common';
import { ConversationWrites } from './conversation-writes';
import { TurnEnqueuer } from './turn-enqueuer';

/** The reader's answer to a tool call waiting for approval. */
export interface ToolApproval {
  toolCallId: string;
  approved: boolean;
  reason?: string;
}

/**
 * POST …/turns/:turnId/approvals: ToolApprovalDecided, then the turn's job woken to go on from
 * the log (the call made, or the denial recorded for the model to read). A second answer is a
 * 409 (approval_decided); another reader's conversation a 404, as for every route.
 */
@Injectable()
export class ToolApprovals {
  constructor(
    private readonly writes: ConversationWrites,
    private readonly enqueuer: TurnEnqueuer,
  ) {}

  async decide(userId: string, conversationId: string, turnId: string, answer: ToolApproval) {
    const [decided] = await this.writes.execute(
      conversationId,
      { type: 'DecideToolApproval', userId, turnId, ...answer },
      { correlationId: turnId },
    );
    await this.enqueuer.approvalDecided(conversationId, turnId);
    return { turnId, toolCallId: answer.toolCallId, approved: answer.approved, version: decided.version };
  }
}
