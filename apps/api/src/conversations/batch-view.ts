import { roundUsd } from '@parley/agent';
import { BatchState, BatchVia, isConversationEvent, Usage } from '@parley/conversation';

export interface BatchItemView {
  prompt: string;
  conversationId: string;
  turnId: string;
  status: 'pending' | 'replied' | 'failed' | 'cancelled';
  answer?: string;
  citations?: unknown[];
  usage?: Usage;
  costUsd?: number;
  latencyMs?: number;
}

export interface BatchView {
  batchId: string;
  mode: 'sequential' | 'independent';
  via: BatchVia;
  status: 'running' | 'completed' | 'failed';
  items: BatchItemView[];
  /** the items' usage summed, with their price and latency */
  metrics: { turns: number; failures: number } & Usage & {
      costUsd: number;
      latencyMsP50: number | null;
      latencyMsP95: number | null;
    };
}

/** A stored event that ended a turn, as the log query reads it. */
export type StoredEnding = { type: string; data: Record<string, unknown> };

/** A batch as it stands: each prompt's answer (`endings`, by `<conversationId>/<turnId>`) and the batch's figures. */
export function batchView(batchId: string, batch: BatchState, endings: Map<string, StoredEnding>): BatchView {
  const items = batch.items.map((item) => batchItemView(item, endings.get(`${item.conversationId}/${item.turnId}`)));
  const answered = items.filter((i) => i.status === 'replied');
  return {
    batchId,
    mode: batch.mode,
    via: batch.via,
    status: !batch.completed ? 'running' : answered.length === 0 ? 'failed' : 'completed',
    items,
    metrics: batchMetrics(items),
  };
}

function batchItemView(
  item: { prompt: string; conversationId: string; turnId: string },
  ending: StoredEnding | undefined,
): BatchItemView {
  const base = { prompt: item.prompt, conversationId: item.conversationId, turnId: item.turnId };
  if (!ending) return { ...base, status: 'pending' };
  if (isConversationEvent(ending) && ending.type === 'AssistantReplied') {
    const d = ending.data;
    return {
      ...base,
      status: 'replied',
      answer: d.content,
      citations: d.citations,
      usage: d.usage,
      costUsd: d.costUsd,
      latencyMs: d.latencyMs,
    };
  }
  return { ...base, status: ending.type === 'TurnFailed' ? 'failed' : 'cancelled' };
}

function batchMetrics(items: BatchItemView[]): BatchView['metrics'] {
  const sum = (f: (u: Usage) => number) => items.reduce((n, i) => n + (i.usage ? f(i.usage) : 0), 0);
  const latencies = items.flatMap((i) => (i.latencyMs === undefined ? [] : [i.latencyMs])).sort((a, b) => a - b);
  const at = (q: number) =>
    latencies.length ? latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)] : null;
  return {
    turns: items.length,
    failures: items.filter((i) => i.status === 'failed').length,
    inputTokens: sum((u) => u.inputTokens),
    outputTokens: sum((u) => u.outputTokens),
    cacheReadInputTokens: sum((u) => u.cacheReadInputTokens),
    cacheCreationInputTokens: sum((u) => u.cacheCreationInputTokens),
    costUsd: roundUsd(items.reduce((n, i) => n + (i.costUsd ?? 0), 0)),
    latencyMsP50: at(0.5),
    latencyMsP95: at(0.95),
  };
}
