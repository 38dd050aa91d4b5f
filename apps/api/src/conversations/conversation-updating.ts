import { Inject, Injectable } from '@nestjs/common';
import { MODEL_TABLE, PriceTable } from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { PolicyPatch } from '@parley/conversation';
import { problem } from '../http/problem.exception';
import { assertPolicyAllowed } from './conversation-limits';
import { ConversationReads } from './conversation-reads.service';
import { ConversationView } from './conversation-view';
import { ConversationWrites } from './conversation-writes';
import { ReadableBooks } from './readable-books';

/** PATCH /conversations/:id: rename, reading position, policy and books, decided together on one version. */
@Injectable()
export class ConversationUpdating {
  constructor(
    private readonly writes: ConversationWrites,
    private readonly books: ReadableBooks,
    private readonly reads: ConversationReads,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(MODEL_TABLE) private readonly prices: PriceTable,
  ) {}

  async update(
    userId: string,
    conversationId: string,
    input: { title?: string; readingPosition?: number | null; policy?: PolicyPatch; bookIds?: string[] },
    ifMatch?: number,
    /** the caller's token's parley_tenant, whose catalogue's books they may use */
    tenant?: string,
  ): Promise<ConversationView> {
    if (Object.values(input).every((v) => v === undefined)) {
      throw problem('validation_failed', 'nothing to change: give title, readingPosition, bookIds and/or policy', {
        errors: [{ field: 'body', message: 'give title, readingPosition, bookIds and/or policy' }],
      });
    }
    if (input.policy) assertPolicyAllowed(this.config, this.prices, input.policy);
    const books = input.bookIds ? await this.books.ready(userId, tenant, input.bookIds) : undefined;
    await this.writes.execute(
      conversationId,
      [
        ...(input.title !== undefined ? [{ type: 'RenameConversation' as const, userId, title: input.title }] : []),
        ...(input.readingPosition !== undefined
          ? [{ type: 'ChangeReadingPosition' as const, userId, readingPosition: input.readingPosition }]
          : []),
        ...(input.policy !== undefined ? [{ type: 'ChangePolicy' as const, userId, policy: input.policy }] : []),
        ...(books ? [{ type: 'ChangeSources' as const, userId, books }] : []),
      ],
      { ifMatch },
    );
    return this.reads.view(userId, conversationId);
  }
}
