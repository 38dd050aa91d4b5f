import { Injectable } from '@nestjs/common';
import { costUsd, roundUsd } from '@parley/agent';
import { ReadModelQueries, UsageByModel, UsageFigures } from '@parley/read-models';

export interface ModelUsage extends UsageFigures {
  cacheHitRate: number;
}

export interface UsageReport extends ModelUsage {
  byModel: Record<string, ModelUsage>;
}

/**
 * Usage from the usage read model: turns, tool calls, failures, tokens, price and the prompt
 * cache's hit rate, in all and by model. Calls of turns that did not reply carry no recorded
 * price: they are priced here from the model's list price, halved for calls that went through
 * the Message Batches API.
 */
@Injectable()
export class UsageService {
  constructor(private readonly queries: ReadModelQueries) {}

  async ofConversation(ownerId: string, conversationId: string): Promise<UsageReport> {
    return report(await this.queries.usage(ownerId, { conversationId }));
  }

  async ofOwner(ownerId: string, range: { from?: Date; to?: Date }): Promise<UsageReport> {
    return report(await this.queries.usage(ownerId, range));
  }
}

function report(rows: UsageByModel[]): UsageReport {
  const byModel: Record<string, ModelUsage> = {};
  let total: UsageFigures = zero();
  for (const row of rows) {
    const { model, unpriced, unpricedBatched, ...figures } = row;
    const unrecorded = model ? costUsd(model, unpriced) + costUsd(model, unpricedBatched, { batched: true }) : 0;
    const priced = { ...figures, costUsd: roundUsd(figures.costUsd + unrecorded) };
    total = add(total, priced);
    if (model) byModel[model] = withHitRate(priced);
  }
  return { ...withHitRate(total), byModel };
}

const zero = (): UsageFigures => ({
  turns: 0,
  toolCalls: 0,
  failures: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  costUsd: 0,
});

function add(a: UsageFigures, b: UsageFigures): UsageFigures {
  const sum = zero();
  for (const k of Object.keys(sum) as Array<keyof UsageFigures>) sum[k] = a[k] + b[k];
  return { ...sum, costUsd: roundUsd(sum.costUsd) };
}

/** The share of input tokens read from the prompt cache (0 with no input). */
function withHitRate(u: UsageFigures): ModelUsage {
  const input = u.inputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens;
  return { ...u, cacheHitRate: input === 0 ? 0 : Math.round((u.cacheReadInputTokens / input) * 10_000) / 10_000 };
}
