/**
 * Long histories and the prompt cache: one conversation with a book (data/books/alice.txt), N
 * turns one after another against the fake Messages API with its prompt-cache simulation on, a
 * context budget the conversation outgrows within a few turns. Counts, over every model call of
 * the conversation (answers, searches and history summaries), the input tokens read from the
 * cache, written to it and sent uncached, and the price. Run on two builds to compare how the
 * history is cut: `node dist/bench/history-cache.js [--turns 30] [--budget 10000]`.
 */
import { FakeAnthropic } from '../test/support/fake-anthropic/fake-anthropic.server';
import { fakeAnthropicEnv } from '../test/support/stack';
import { aliceQuestions, uploadAlice } from './alice';
import { add } from './report';
import { runStandalone } from './standalone';
import { benchClient, liveConversation, withStack } from './service';
import { argValue, fmt } from './util';

interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

export interface HistoryCacheResult {
  turns: number;
  budgetTokens: number;
  summaries: number;
  trims: number;
  cacheRead: number;
  cacheWritten: number;
  uncached: number;
  costUsd: number;
}

export async function historyCacheBench(turns = 30, budgetTokens = 10_000): Promise<HistoryCacheResult> {
  const fake = await FakeAnthropic.start();
  try {
    return await withStack(
      { apis: 1, workers: 1, env: { ...fakeAnthropicEnv(fake.url), AGENT_CONTEXT_TOKENS: String(budgetTokens) } },
      async (stack) => {
        const reader = benchClient(stack);
        const conv = await liveConversation(reader, await uploadAlice(reader));
        const questions = aliceQuestions();
        try {
          for (let t = 0; t < turns; t++) {
            const r = await conv.turn(questions[t % questions.length]);
            if (r.type !== 'AssistantReplied') throw new Error(`turn ${t + 1} ended ${r.type}`);
          }
        } finally {
          conv.close();
        }
        const events: Array<{ type: string; version: number; data: { usage?: Usage; costUsd?: number } }> = [];
        for (let after = 0; ;) {
          const page = await reader.req('GET', `/v1/conversations/${conv.id}/events?after=${after}&limit=500`);
          events.push(...page.body.items);
          if (page.body.items.length < 500) break;
          after = page.body.items[page.body.items.length - 1].version;
        }
        const paid = events.filter((e) => e.type === 'AssistantReplied' || e.type === 'HistorySummarized');
        const sum = (f: (u: Usage) => number) => paid.reduce((n, e) => n + (e.data.usage ? f(e.data.usage) : 0), 0);
        return {
          turns,
          budgetTokens,
          summaries: events.filter((e) => e.type === 'HistorySummarized').length,
          trims: events.filter((e) => e.type === 'HistoryTrimmed').length,
          cacheRead: sum((u) => u.cacheReadInputTokens),
          cacheWritten: sum((u) => u.cacheCreationInputTokens),
          uncached: sum((u) => u.inputTokens),
          costUsd: paid.reduce((n, e) => n + (e.data.costUsd ?? 0), 0),
        };
      },
    );
  } finally {
    await fake.close();
  }
}

export function reportHistoryCache(r: HistoryCacheResult): void {
  const input = r.cacheRead + r.cacheWritten + r.uncached;
  add({
    section: 'history-cache',
    figure: `${r.turns} turns, budget ${r.budgetTokens} tokens: cache hit rate (read / all input tokens)`,
    value: `${fmt((100 * r.cacheRead) / input, 1)} %`,
    n: r.cacheRead / input,
    anchor: `${r.summaries} summaries, ${r.trims} trims`,
  });
  add({
    section: 'history-cache',
    figure: 'input tokens: read from the cache / written to it / uncached; price',
    value: `${r.cacheRead} / ${r.cacheWritten} / ${r.uncached}; $${r.costUsd.toFixed(4)}`,
    n: r.costUsd,
  });
}

if (require.main === module) {
  void runStandalone(async () =>
    reportHistoryCache(await historyCacheBench(Number(argValue('turns') ?? 30), Number(argValue('budget') ?? 10_000))),
  );
}
