import { Injectable } from '@nestjs/common';
import { ConversationWrites } from './conversation-writes';
import { TurnEnqueuer } from './turn-enqueuer';

/** DELETE …/turns/:turnId: TurnCancelled, and the cancel signal to its worker; a turn already ended is left as it is. */
@Injectable()
export class TurnCancelling {
  constructor(
    private readonly writes: ConversationWrites,
    private readonly enqueuer: TurnEnqueuer,
  ) {}

  async cancel(
    userId: string,
    conversationId: string,
    turnId: string,
  ): Promise<{ turnId: string; cancelled: boolean }> {
    const appended = await this.writes.execute(
      conversationId,
      { type: 'CancelTurn', userId, turnId },
      { correlationId: turnId },
    );
    if (appended.length > 0) await this.enqueuer.turnCancelled(conversationId, turnId);
    return { turnId, cancelled: appended.length > 0 };
  }
}
