import { Injectable } from '@nestjs/common';
import { Erasures } from '@parley/erasure';
import { RateLimits } from '../rate-limits/rate-limits';
import { StreamSlots } from '../rate-limits/stream-slots';
import { TurnEnqueuer } from './turn-enqueuer';

/**
 * A reader's erasure requests (docs/erasure.md): libs/erasure erases the records; then the
 * workers stop the turns that would answer no one, and an erased account leaves no rate-limit key.
 */
@Injectable()
export class ErasureRequests {
  constructor(
    private readonly erasures: Erasures,
    private readonly enqueuer: TurnEnqueuer,
    private readonly rateLimits: RateLimits,
    private readonly streamSlots: StreamSlots,
  ) {}

  async conversation(userId: string, conversationId: string, ifMatch?: number): Promise<void> {
    await this.enqueuer.conversationErased(await this.erasures.conversation(userId, conversationId, ifMatch));
  }

  async account(userId: string): Promise<void> {
    const { conversations } = await this.erasures.account(userId);
    for (const erased of conversations) await this.enqueuer.conversationErased(erased);
    await this.rateLimits.forget(userId);
    await this.streamSlots.forget(userId);
  }
}
