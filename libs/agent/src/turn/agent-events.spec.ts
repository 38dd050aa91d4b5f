import { fold } from '@parley/conversation';
import { e, posted, result as resultOf } from '../../../../test/support/factories/turn-events';
import { ChatResult, StoppedAttempt } from '../llm/llm.types';
import {
  assistantReplied,
  historySummarized,
  historyTrimmed,
  modelBatchSubmitted,
  modelCallStopped,
  modelReplied,
  searchesInvoked,
  StepMade,
  stepIdFor,
  toolResultsRecorded,
} from './agent-events';
import { priceTableWith } from '../llm/pricing';
import { HistoryCut } from './history-cut';
import { evolveTurns, TurnEvent, turnsOf } from './turn-fold';

/** The shipped prices. */
const prices = priceTableWith();
const { costUsd } = prices;

const usage = { inputTokens: 1200, outputTokens: 35, cacheReadInputTokens: 300, cacheCreationInputTokens: 0 };
const attempt = (messageId: string, cause: StoppedAttempt['cause']): StoppedAttempt => ({
  messageId,
  model: 'claude-sonnet-5-5',
  usage,
  cause,
});

describe(modelCallStopped.name, () => {
  it('says why the call stopped: broken midway, cancelled by the reader, or aborted otherwise', () => {
    const reasons = (cancelled: boolean) =>
      modelCallStopped(prices, 't1', 2, [attempt('msg_1', 'broken'), attempt('msg_2', 'aborted')], { cancelled }).map(
        (e) => (e.data as { reason: string }).reason,
      );
    expect(reasons(true)).toEqual(['broken', 'cancelled']);
    expect(reasons(false)).toEqual(['broken', 'aborted']);
  });

  it('names each event after its turn, call and attempt: made again, it is the same event', () => {
    const [first] = modelCallStopped(prices, 't1', 2, [attempt('msg_1', 'aborted')], { cancelled: true });
    expect(first).toMatchObject({
      type: 'ModelCallStopped',
      data: {
        turnId: 't1',
        iteration: 2,
        model: 'claude-sonnet-5-5',
        usage,
        costUsd: costUsd('claude-sonnet-5-5', usage),
        reason: 'cancelled',
      },
    });
    expect(first.id).toMatch(/^[0-9a-f-]{36}$/);
    const again = modelCallStopped(prices, 't1', 2, [attempt('msg_1', 'aborted')]);
    expect(again[0].id).toBe(first.id);
    const ids = [
      modelCallStopped(prices, 't1', 2, [attempt('msg_2', 'aborted')]),
      modelCallStopped(prices, 't1', 3, [attempt('msg_1', 'aborted')]),
      modelCallStopped(prices, 't2', 2, [attempt('msg_1', 'aborted')]),
    ].map(([e]) => e.id);
    expect(new Set([first.id, ...ids]).size).toBe(4);
  });

  it('changes no fold: the conversation and its turns stay as they were', () => {
    let version = 0;
    const stored = (type: string, data: object) =>
      ({ type, data, version: ++version, occurredAt: new Date(), id: `e${version}` }) as TurnEvent;
    const log = [
      stored('ConversationStarted', { ownerId: 'reader', bookId: null, title: null, readingPosition: null }),
      stored('UserMessagePosted', { messageId: 'm1', turnId: 't1', content: 'q' }),
    ];
    const [stopped] = modelCallStopped(prices, 't1', 1, [attempt('msg_1', 'broken')]);
    const after = stored(stopped.type, stopped.data);
    expect(fold([...log, after])).toEqual({ ...fold(log), version: 3 });
    const turns = turnsOf(log);
    expect(evolveTurns(turns, after)).toBe(turns);
  });
});

/** A step done at a fixed instant: every id its events carry derives from its own. */
const made: StepMade = { stepId: 'step-1', at: new Date('2026-11-22T10:00:02.500Z') };
const id = (what: string) => stepIdFor(made, what);
const answer = (content: ChatResult['content'], extra: Partial<ChatResult> = {}): ChatResult => ({
  content,
  stopReason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
  usage: { inputTokens: 1000, outputTokens: 100, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
  model: 'claude-sonnet-5-5',
  ...extra,
});
const chunk = (chunkId: string) => ({ chunkId, chapter: 'I', section: null, page: null, score: 1 });

describe(modelReplied.name, () => {
  const [turn] = turnsOf([posted('t1')]);
  const asksForTwoSearches = answer([
    { type: 'text', text: 'Let me look.' },
    { type: 'tool_use', id: 'toolu_a', name: 'search_book', input: { query: 'a' } },
    { type: 'tool_use', id: 'toolu_b', name: 'search_book', input: { query: 'b' } },
  ]);

  it('records the tool calls a model asked for, the first with its text, blocks, usage, model and price', () => {
    // given a turn, when its first call asks for two searches
    const events = modelReplied(prices, made, turn, { iteration: 1, allowTools: true }, asksForTwoSearches);
    // then one ToolInvoked per call, in the model's order
    expect(events).toEqual([
      {
        id: id('event:toolu_a'),
        type: 'ToolInvoked',
        data: {
          turnId: 't1',
          toolUseId: 'toolu_a',
          name: 'search_book',
          input: { query: 'a' },
          iteration: 1,
          assistantText: 'Let me look.',
          assistantContent: [
            { type: 'text', text: 'Let me look.' },
            { type: 'tool_use', toolUseId: 'toolu_a' },
            { type: 'tool_use', toolUseId: 'toolu_b' },
          ],
          usage: asksForTwoSearches.usage,
          model: 'claude-sonnet-5-5',
          costUsd: costUsd('claude-sonnet-5-5', asksForTwoSearches.usage),
        },
      },
      {
        id: id('event:toolu_b'),
        type: 'ToolInvoked',
        data: { turnId: 't1', toolUseId: 'toolu_b', name: 'search_book', input: { query: 'b' }, iteration: 1 },
      },
    ]);
  });

  it('marks calls answered through a provider batch, and puts the attempts broken off midway first', () => {
    const broken: StoppedAttempt = {
      messageId: 'msg_1',
      model: 'claude-sonnet-5-5',
      usage: answer([]).usage,
      cause: 'broken',
    };
    const batched = { ...asksForTwoSearches, batched: true, stoppedAttempts: [broken] };
    const events = modelReplied(prices, made, turn, { iteration: 2, allowTools: true }, batched);
    expect(events.map((ev) => ev.type)).toEqual(['ModelCallStopped', 'ToolInvoked', 'ToolInvoked']);
    expect(events[0]).toEqual(modelCallStopped(prices, 't1', 2, [broken])[0]);
    expect(events[1].data).toMatchObject({ iteration: 2, batched: true });
  });

  it('answers instead on the last call, whatever the model asked for', () => {
    const events = modelReplied(prices, made, turn, { iteration: 5, allowTools: false }, asksForTwoSearches);
    expect(events).toEqual([expect.objectContaining({ type: 'AssistantReplied' })]);
  });
});

describe(assistantReplied.name, () => {
  // given a turn whose first call searched (its usage recorded) and found two passages
  const [turn] = turnsOf([
    posted('t1'),
    e('ToolInvoked', {
      turnId: 't1',
      toolUseId: 's1',
      name: 'search_book',
      input: { query: 'q' },
      iteration: 1,
      usage: { inputTokens: 500, outputTokens: 20, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
      model: 'claude-sonnet-5-5',
    }),
    resultOf('t1', 's1', [chunk('c1'), chunk('c2')], 1),
  ]);

  it('sums the usage of all the calls, prices it, cites the passages and measures the latency', () => {
    // when the second call answers citing the second passage, 2.5 s after the question
    const event = assistantReplied(prices, made, turn, 2, answer([{ type: 'text', text: 'She left [2].' }]));
    // then
    expect(event).toEqual({
      id: id('event:answer'),
      type: 'AssistantReplied',
      data: {
        turnId: 't1',
        messageId: id('message'),
        content: 'She left [2].',
        model: 'claude-sonnet-5-5',
        stopReason: 'end_turn',
        usage: { inputTokens: 1500, outputTokens: 120, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
        costUsd: 0.0042, // 1,500 in and 120 out at 2/10 per million
        citations: [chunk('c2')],
        isFromBook: true,
        iterations: 2,
        latencyMs: 2_500,
      },
    });
  });

  it('prices an answer from a provider batch at half, and says so when the model wrote nothing', () => {
    const event = assistantReplied(prices, made, turn, 2, answer([{ type: 'text', text: '  ' }], { batched: true }));
    expect(event.data).toMatchObject({ content: '(no answer)', costUsd: 0.0021, citations: [], isFromBook: false });
  });
});

describe(modelBatchSubmitted.name, () => {
  it('records which provider batch holds the call of which step', () => {
    const submitted = { step: 't1/reply/1', provider: 'anthropic', providerBatchId: 'msgbatch_1' };
    expect(modelBatchSubmitted(made, 't1', submitted)).toEqual({
      id: id('event:submitted'),
      type: 'ModelBatchSubmitted',
      data: { turnId: 't1', step: 't1/reply/1', provider: 'anthropic', providerBatchId: 'msgbatch_1' },
    });
  });
});

describe(toolResultsRecorded.name, () => {
  it("records each tool's output in call order, with its passages' first number when it has passages", () => {
    const call = (toolUseId: string) => ({ toolUseId, name: 'search_book', input: {} });
    const events = toolResultsRecorded(made, 't1', [
      { call: call('a'), output: { content: '[1] A passage', chunks: [chunk('c1')] }, citationStart: 1 },
      { call: call('b'), output: { content: 'no such book', isError: true }, citationStart: 11 },
    ]);
    expect(events).toEqual([
      {
        id: id('event:a'),
        type: 'ToolResultRecorded',
        data: {
          turnId: 't1',
          toolUseId: 'a',
          content: '[1] A passage',
          isError: false,
          chunks: [chunk('c1')],
          citationStart: 1,
        },
      },
      {
        id: id('event:b'),
        type: 'ToolResultRecorded',
        data: { turnId: 't1', toolUseId: 'b', content: 'no such book', isError: true },
      },
    ]);
  });
});

describe('history cuts', () => {
  const cut: HistoryCut = { summarised: [], coversVersions: [2, 9], droppedVersions: [4, 9] };
  const summary = answer([{ type: 'text', text: ' They met at the lighthouse. ' }]);

  it('records the summary with what it covers and what it cost', () => {
    expect(historySummarized(prices, made, 't1', cut, summary)).toEqual([
      {
        id: id('event:summary'),
        type: 'HistorySummarized',
        data: {
          turnId: 't1',
          coversVersions: [2, 9],
          summary: 'They met at the lighthouse.',
          usage: summary.usage,
          model: 'claude-sonnet-5-5',
          costUsd: 0.003,
        },
      },
    ]);
  });

  it('drops the turns instead when the summary is empty or its call failed, after what the call was billed', () => {
    const broken: StoppedAttempt = { messageId: 'msg_1', model: 'm', usage: summary.usage, cause: 'broken' };
    const empty = historySummarized(prices, made, 't1', cut, answer([], { stoppedAttempts: [broken] }));
    expect(empty.map((ev) => [ev.type, ev.data])).toEqual([
      ['ModelCallStopped', expect.objectContaining({ reason: 'broken' })],
      [
        'HistoryTrimmed',
        { turnId: 't1', droppedVersions: [4, 9], reason: 'empty_summary: the model wrote an empty summary' },
      ],
    ]);
    const failed = { code: 'llm_overloaded', message: 'x'.repeat(600), stoppedAttempts: [broken] };
    const trimmed = historyTrimmed(prices, made, 't1', cut, failed);
    expect(trimmed.map((ev) => ev.type)).toEqual(['ModelCallStopped', 'HistoryTrimmed']);
    expect(trimmed[1].data).toMatchObject({ droppedVersions: [4, 9], reason: `llm_overloaded: ${'x'.repeat(484)}` });
  });
});

describe(searchesInvoked.name, () => {
  const [turn] = turnsOf([posted('t1', 'Who kept the lamp?')]);
  const written = (text: string) => answer([{ type: 'text', text }]);

  it("records the rewritten question's first line as a search, with the HyDE passage as a second search", () => {
    const events = searchesInvoked(
      prices,
      made,
      turn,
      written('lamp keeper name\nmore'),
      written('The keeper,\n  Ada,  lit it.'),
    );
    expect(events).toEqual([
      {
        id: id('event:query'),
        type: 'ToolInvoked',
        data: {
          turnId: 't1',
          toolUseId: `retrieve_${id('query')}`,
          name: 'search_book',
          input: { query: 'lamp keeper name' },
          iteration: 1,
          usage: { inputTokens: 2000, outputTokens: 200, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
          model: 'claude-sonnet-5-5',
        },
      },
      {
        id: id('event:hyde'),
        type: 'ToolInvoked',
        data: {
          turnId: 't1',
          toolUseId: `hyde_${id('hyde')}`,
          name: 'search_book',
          input: { query: 'The keeper, Ada, lit it.' },
          iteration: 1,
        },
      },
    ]);
  });

  it('searches for the question itself when the model wrote no query, and once without HyDE', () => {
    const events = searchesInvoked(prices, made, turn, written(''), null);
    expect(events.map((ev) => ev.data)).toEqual([
      expect.objectContaining({ input: { query: 'Who kept the lamp?' }, usage: written('').usage }),
    ]);
  });
});
