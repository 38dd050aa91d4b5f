import { randomUUID } from 'node:crypto';
import { ConversationEvent, conversationStreamId } from '@parley/conversation';
import { EventStore, NewEvent } from '@parley/event-store';
import { turnOf } from '../support/api';
import { defaultReply } from '../support/fake-anthropic/default-responder';
import { apiError, FakeError, FakeReply, RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { useReaderStack } from '../support/use-stack';

const isSummaryRequest = (r: RecordedRequest) => JSON.stringify(r.body.system ?? '').includes('You summarise');
const firstText = (r: RecordedRequest): string => {
  const first = r.body.messages[0]?.content;
  return Array.isArray(first) ? (first[0]?.text ?? '') : String(first ?? '');
};

/**
 * A conversation that outgrows a small context budget: its history is cut in steps, the turns
 * left out summarised by the model (HistorySummarized) or, when that call fails, dropped
 * (HistoryTrimmed); the history of a turn never changes between its calls.
 */
describe('long histories (e2e, real SDK against the fake Messages API)', () => {
  let summaryFails = false;
  let summaries = 0;
  const s = useReaderStack({
    fake: {
      defaultResponder: (req): FakeReply | FakeError => {
        if (!isSummaryRequest(req)) return defaultReply(req);
        if (summaryFails) return apiError(400, 'summary refused');
        return { content: [{ type: 'text', text: `Summary ${++summaries}: the reader asked about Marisol.` }] };
      },
    },
    env: { AGENT_CONTEXT_TOKENS: '3000', LLM_MAX_RETRIES: '0' },
  });
  const { conversation, events, ask } = s;
  /** Posts each question once the one before is answered; the conversation's events at the end. */
  const converse = async (id: string, questions: string[]) => {
    for (const content of questions) expect((await ask(id, content)).ending.type).toBe('AssistantReplied');
    return events(id);
  };

  it('summarises older turns in steps over 30 turns, and the summary stays in a cached prefix', async () => {
    const id = await conversation();
    const questions = Array.from({ length: 30 }, (_, i) => `Question ${i}: what did Marisol find in the lamp room?`);
    const log = await converse(id, questions);
    const summarised = log.filter((e) => e.type === 'HistorySummarized');
    expect(summarised.length).toBeGreaterThanOrEqual(2);
    expect(summarised.length).toBeLessThanOrEqual(10); // in steps: not a cut every turn
    for (const summary of summarised) {
      const data = summary.data as { coversVersions: number[]; summary: string; usage: { outputTokens: number } };
      expect(data.summary).toMatch(/^Summary \d+:/);
      expect(data.coversVersions[0]).toBeLessThanOrEqual(data.coversVersions[1]);
      expect(data.coversVersions[1]).toBeLessThan(summary.version);
      expect(data.usage.outputTokens).toBeGreaterThan(0);
      // taken ahead: recorded by the turn that outgrew the share, after its reply, so no reader waited for it
      const turnEvents = log.filter((e) => turnOf(e) === turnOf(summary));
      expect(turnEvents.map((e) => e.type).slice(-2)).toEqual(['AssistantReplied', 'HistorySummarized']);
    }
    // each summary was paid for once, though the next question was posted while it was being
    // written: the turn after waited for it instead of asking for the same summary itself
    const summaryCalls = s.fake.requests
      .filter((r) => isSummaryRequest(r) && JSON.stringify(r.body.messages).includes('lamp room'))
      .map((r) => JSON.stringify(r.body.messages));
    expect(summaryCalls.length).toBeGreaterThanOrEqual(summarised.length);
    expect(new Set(summaryCalls).size).toBe(summaryCalls.length);
    // every request of the last question starts with the latest summary recorded before it
    const lastQuestion = log.find(
      (e) => e.type === 'UserMessagePosted' && (e.data as { content: string }).content.startsWith('Question 29'),
    )!;
    const answering = s.fake.requests.filter(
      (r) => !isSummaryRequest(r) && JSON.stringify(r.body.messages).includes('Question 29'),
    );
    expect(answering.length).toBeGreaterThan(0);
    const last = summarised.filter((e) => e.version < lastQuestion.version).pop()!.data as { summary: string };
    for (const r of answering) expect(firstText(r)).toContain(last.summary);
    // the prompt cache: most input tokens of the answers were read from the cache
    const usage = log
      .filter((e) => e.type === 'AssistantReplied')
      .map((e) => (e.data as { usage: Record<string, number> }).usage);
    const read = usage.reduce((n, u) => n + u.cacheReadInputTokens, 0);
    const all = usage.reduce((n, u) => n + u.inputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens, 0);
    expect(read / all).toBeGreaterThan(0.5);
  }, 180_000);

  it('drops the turns left out when the summary call fails (HistoryTrimmed), and still answers', async () => {
    const id = await conversation();
    summaryFails = true;
    try {
      const log = await converse(
        id,
        Array.from({ length: 16 }, (_, i) => `Question ${i}: and the ship?`),
      );
      const trimmed = log.filter((e) => e.type === 'HistoryTrimmed');
      expect(trimmed.length).toBeGreaterThanOrEqual(1);
      expect(log.filter((e) => e.type === 'HistorySummarized')).toHaveLength(0);
      expect(log.filter((e) => e.type === 'AssistantReplied')).toHaveLength(16);
      expect(log.filter((e) => e.type === 'TurnFailed')).toHaveLength(0);
      const data = trimmed[0].data as { droppedVersions: number[]; reason: string };
      // the reason is Parley's words for the failure's code; the provider's own text stays in the worker's log
      expect(data.reason).toMatch(/^llm_http_400: The model's provider refused the request/);
      expect(data.reason).not.toContain('summary refused');
      // the dropped question is in no later request
      const droppedQuestion = log.find((e) => e.type === 'UserMessagePosted' && e.version === data.droppedVersions[0])!;
      const later = s.fake.requests.filter(
        (r) => !isSummaryRequest(r) && JSON.stringify(r.body.messages).includes('Question 15: and the ship?'),
      );
      expect(later.length).toBeGreaterThan(0);
      const dropped = (droppedQuestion.data as { content: string }).content;
      for (const r of later) expect(JSON.stringify(r.body.messages)).not.toContain(dropped);
    } finally {
      summaryFails = false;
    }
  }, 180_000);

  it('continues a long conversation written before histories were cut: its next turn summarises it', async () => {
    const id = await conversation();
    // 24 answered search turns as the release before wrote them: no cut in the log
    const store = new EventStore(s.stack.db.pool);
    const turns = 24;
    for (let i = 0; i < turns; i++) {
      const turnId = randomUUID();
      const toolUseId = `toolu_old${i}`;
      const stream = conversationStreamId(id);
      const version = await store.streamVersion(stream);
      await store.append(
        stream,
        [
          { type: 'UserMessagePosted', data: { messageId: randomUUID(), turnId, content: `Old question ${i}?` } },
          {
            type: 'ToolInvoked',
            data: {
              turnId,
              toolUseId,
              name: 'search_book',
              input: { query: `old ${i}` },
              iteration: 1,
              assistantText: '',
              assistantContent: [{ type: 'tool_use', toolUseId }],
            },
          },
          {
            type: 'ToolResultRecorded',
            data: { turnId, toolUseId, content: `Old passage ${i}. ${'text '.repeat(120)}`, isError: false },
          },
          {
            type: 'AssistantReplied',
            data: {
              turnId,
              messageId: randomUUID(),
              content: `Old answer ${i}.`,
              model: 'claude-sonnet-4-5',
              stopReason: 'end_turn',
              usage: { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
              costUsd: 0,
              citations: [],
              iterations: 2,
              latencyMs: 100,
            },
          },
        ].map((e) => ({ ...e, id: randomUUID(), metadata: {} })) as NewEvent<ConversationEvent>[],
        { expectedVersion: version },
      );
    }
    const log = await converse(id, ['New question: what became of the lamp?']);
    const summarised = log.filter((e) => e.type === 'HistorySummarized');
    expect(summarised).toHaveLength(1);
    const newTurn = log[log.length - 1];
    expect(turnOf(summarised[0])).toBe(turnOf(newTurn));
    const request = s.fake.requests.find(
      (r) => !isSummaryRequest(r) && JSON.stringify(r.body.messages).includes('New question: what became'),
    )!;
    expect(firstText(request)).toContain((summarised[0].data as { summary: string }).summary);
    const sent = JSON.stringify(request.body.messages);
    expect(sent).not.toContain('Old question 0?');
    expect(sent).toContain(`Old question ${turns - 1}?`);
    // the summary call was given the turns it covers
    const summaryRequest = s.fake.requests.filter(isSummaryRequest).pop()!;
    expect(JSON.stringify(summaryRequest.body.messages)).toContain('Old question 0?');
  }, 120_000);
});
