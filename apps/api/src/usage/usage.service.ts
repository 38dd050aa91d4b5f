import { Inject, Injectable } from '@nestjs/common';
import { MODEL_TABLE, PriceTable } from '@parley/agent';
import { ReadModelQueries, UsageReport, usageReport } from '@parley/read-models';

export type { ModelUsage, UsageReport } from '@parley/read-models';

/**
 * Usage from the usage ledger: turns, tool calls, failures, tokens, price and the prompt cache's
 * hit rate, in all and by model; lines recorded without a price are priced at list price.
 */
@Injectable()
export class UsageService {
  constructor(
    private readonly queries: ReadModelQueries,
    @Inject(MODEL_TABLE) private readonly prices: PriceTable,
  ) {}

  async ofConversation(ownerId: string, conversationId: string): Promise<UsageReport> {
    return usageReport(await this.queries.usage(ownerId, { conversationId }), this.prices.costUsd);
  }

  async ofOwner(ownerId: string, range: { from?: Date; to?: Date }): Promise<UsageReport> {
    return usageReport(await this.queries.usage(ownerId, range), this.prices.costUsd);
  }
}
