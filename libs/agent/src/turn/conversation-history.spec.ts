import { at, e, invoked, posted, replied, result } from '../../../../test/support/factories/turn-events';
import { LlmMessage } from '../llm/llm.types';
import { buildHistory } from './conversation-history';
import { historyCutAhead, historyCutOf, historyWindow, turnsStillNeeded } from './history-cut';
import { estimateTokens } from './turn-messages';
import { planTurn, TurnPlanContext } from './turn-plan';
import { evolveTurns, TurnEvent, TurnRecord, turnsOf } from './turn-fold';

describe(buildHistory.name, () => {
  it('keeps text the model wrote after or between its tool calls where it wrote it', () => {
    const first = (toolUseId: string) =>
      e('ToolInvoked', {
        turnId: 't1',
        toolUseId,
        name: 'search_book',
        input: { query: 'q' },
        iteration: 1,
        assistantText: 'Looking. Then this.After both.',
        assistantContent: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', toolUseId: 'a' },
          { type: 'text', text: ' Then this.' },
          { type: 'tool_use', toolUseId: 'b' },
          { type: 'text', text: 'After both.' },
        ],
      });
    const turns = turnsOf([posted('t1'), first('a'), invoked('t1', 'b'), result('t1', 'a'), result('t1', 'b')]);
    const { messages } = buildHistory(turns, 't1', 10_000);
    expect(messages[1].content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_use' ? b.id : ''))).toEqual([
      'Looking.',
      'a',
      ' Then this.',
      'b',
      'After both.',
    ]);
  });

  it('replays an iteration recorded before the block order was kept with its text first (old events)', () => {
    const turns = turnsOf([posted('t1'), invoked('t1', 'a', 1, 'All the text.'), result('t1', 'a')]);
    const { messages } = buildHistory(turns, 't1', 10_000);
    expect(messages[1].content.map((b) => b.type)).toEqual(['text', 'tool_use']);
  });

  it('replays earlier turns exactly: text and tool_use in order with their ids, results first', () => {
    const events = [
      posted('t1'),
      invoked('t1', 'a', 1, 'Let me look.'),
      invoked('t1', 'b'),
      result('t1', 'a'),
      result('t1', 'b'),
      replied('t1'),
      posted('t2'),
    ];
    const { messages, prefixEnd } = buildHistory(turnsOf(events), 't2', 100_000);
    expect(messages.map((m) => [m.role, m.content.map((b) => b.type)])).toEqual([
      ['user', ['text']],
      ['assistant', ['text', 'tool_use', 'tool_use']],
      ['user', ['tool_result', 'tool_result']],
      ['assistant', ['text']],
      ['user', ['text']],
    ]);
    expect(messages[1].content.slice(1).map((b) => (b as { id: string }).id)).toEqual(['a', 'b']);
    expect(prefixEnd).toBe(3);
    // the same events always give the same bytes: the prompt-cache prefix
    const turn1Alone = buildHistory(turnsOf(events.slice(0, 5)), 't1', 100_000).messages;
    expect(JSON.stringify(messages.slice(0, turn1Alone.length))).toBe(JSON.stringify(turn1Alone));
  });

  it('keeps only the question of a turn that failed, merging it with the next one', () => {
    const events = [posted('t1'), invoked('t1', 'a'), e('TurnFailed', { turnId: 't1' }), posted('t2')];
    const { messages } = buildHistory(turnsOf(events), 't2', 100_000);
    expect(messages).toHaveLength(1);
    expect(messages[0].content.map((b) => (b as { text: string }).text)).toEqual(['question t1', 'question t2']);
  });

  it('tells the model of changed books with the first question after the change, in every later history', () => {
    const note = 'The reader changed the books of this conversation. search_book now searches: "A" (book a).';
    const turns = [...turnsOf([posted('t1'), replied('t1')]), ...evolveTurns([], posted('t2'), { sourcesNote: note })];
    const { messages } = buildHistory(turns, 't2', 100_000);
    const last = messages[messages.length - 1].content.map((b) => (b as { text: string }).text);
    expect(last).toEqual([note, 'question t2']);
    expect(JSON.stringify(messages.slice(0, 2))).not.toContain('search_book now searches');
  });

  it('puts the highlighted passage before the question', () => {
    const events = [
      e('UserMessagePosted', { messageId: 'm', turnId: 't1', content: 'Why?', selectedText: 'She wept.' }),
    ];
    const [user] = buildHistory(turnsOf(events), 't1', 100_000).messages;
    expect((user.content[0] as { text: string }).text).toContain('She wept.');
    expect(user.content[1]).toEqual({ type: 'text', text: 'Why?' });
  });
});

/**
 * A conversation of `n` search turns run one after another as a worker runs them: a turn cuts its
 * history when the plan says so (recording HistorySummarized, or HistoryTrimmed where
 * `summaryFails`), then searches and answers. Returns each turn's first request and what the
 * worker's fold held, with the fold compacted after every turn when `compact`.
 */
function runConversation(
  n: number,
  budgetTokens: number,
  opts: { compact?: boolean; withTools?: boolean; summaryFails?: (turn: number) => boolean; ahead?: boolean } = {},
) {
  const withTools = opts.withTools ?? true;
  const context: TurnPlanContext = {
    settings: { maxIterations: 5, budgetTokens, retrievalMode: withTools ? 'tools' : 'always-retrieve' },
    searchOffered: true,
    providerSupportsTools: true,
    deleted: false,
  };
  const plan = (turnId: string) => planTurn(turns, turnId, context);
  let v = 0;
  const ev = (type: string, data: object): TurnEvent => ({ type, data, version: ++v, occurredAt: at }) as TurnEvent;
  let turns: TurnRecord[] = [];
  const apply = (event: TurnEvent) => (turns = evolveTurns(turns, event));
  /** The model's summary of everything up to `lastCut`, recorded by turn `turnId`. */
  const summarised = (turnId: string, lastCut: number) =>
    ev('HistorySummarized', {
      turnId,
      coversVersions: [1, lastCut],
      summary: `what happened up to version ${lastCut}`,
      usage: { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
      model: 'm',
      costUsd: 0,
    });
  const firstRequests: LlmMessage[][] = [];
  const cutsAt: number[] = [];
  const aheadAt: number[] = [];
  let mostKept = 0;
  let mostKeptTokens = 0;
  for (let k = 0; k < n; k++) {
    const id = `t${k}`;
    apply(
      ev('UserMessagePosted', {
        messageId: `m${k}`,
        turnId: id,
        content: `question ${k} ${'w'.repeat((k * 37) % 200)}`,
      }),
    );
    let step = plan(id);
    if (step.kind === 'cut-history') {
      cutsAt.push(k);
      const lastCut = turns[step.to].postedVersion - 1;
      apply(
        opts.summaryFails?.(k)
          ? ev('HistoryTrimmed', {
              turnId: id,
              droppedVersions: [turns[step.from].postedVersion, lastCut],
              reason: 'overloaded',
            })
          : summarised(id, lastCut),
      );
      step = plan(id);
    }
    expect(step).toEqual(withTools ? { kind: 'call-llm', iteration: 1, allowTools: true } : { kind: 'reformulate' });
    const first = buildHistory(turns, id, budgetTokens, { withTools });
    firstRequests.push(first.messages);
    apply(
      ev('ToolInvoked', { turnId: id, toolUseId: `s${k}`, name: 'search_book', input: { query: 'q' }, iteration: 1 }),
    );
    apply(
      ev('ToolResultRecorded', {
        turnId: id,
        toolUseId: `s${k}`,
        content: `passage ${k} ${'r'.repeat(400)}`,
        isError: false,
      }),
    );
    expect(plan(id).kind).toBe(withTools ? 'call-llm' : 'answer'); // no cut within a turn
    const second = buildHistory(turns, id, budgetTokens, { withTools });
    // the turn's second call sends the same history before the turn's own messages
    const earlier = first.messages.slice(0, first.prefixEnd + 1);
    expect(second.messages.slice(0, earlier.length)).toEqual(earlier);
    apply(
      ev('AssistantReplied', { turnId: id, messageId: `a${k}`, content: `answer ${k} ${'v'.repeat((k * 53) % 300)}` }),
    );
    // the cut the next turn would need, taken ahead by this one after its reply
    const ahead = opts.ahead ? plan(id) : undefined;
    if (ahead?.kind === 'cut-history') {
      aheadAt.push(k);
      apply(summarised(id, turns[ahead.to].postedVersion - 1));
      expect(plan(id)).toEqual({ kind: 'ended' });
    }
    if (opts.compact) turns = turnsStillNeeded(turns, { historiesWithoutTools: !withTools });
    mostKept = Math.max(mostKept, turns.length);
    const rendered = turns.map((t) => (withTools ? t.rendered?.withTools : t.rendered?.withoutTools)?.tokens ?? 0);
    mostKeptTokens = Math.max(
      mostKeptTokens,
      rendered.reduce((a, b) => a + b, 0),
    );
  }
  return { firstRequests, cutsAt, aheadAt, mostKept, mostKeptTokens, turns };
}

const firstText = (m: LlmMessage) => (m.content[0] as { text?: string }).text ?? '';

describe(historyWindow.name, () => {
  const budget = 6_000;

  it("cuts the history in steps, so the prefix a turn sends is the next turn's prefix until the next cut", () => {
    const { firstRequests, cutsAt } = runConversation(60, budget);
    expect(cutsAt.length).toBeGreaterThan(2);
    // between cuts a history only grows at its end: turn k+1's history starts with all of turn k's
    for (let k = 1; k < firstRequests.length; k++) {
      if (cutsAt.includes(k)) continue;
      const before = firstRequests[k - 1].slice(0, -1); // all but turn k-1's own question
      expect(JSON.stringify(firstRequests[k].slice(0, before.length))).toBe(JSON.stringify(before));
    }
    // a cut leaves many turns between it and the next: the prefix holds for all of them
    const gaps = cutsAt.slice(1).map((c, i) => c - cutsAt[i]);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(4);
    // after a cut the summary comes first, and every request stays within the budget
    for (const k of cutsAt) expect(firstText(firstRequests[k][0])).toContain('<conversation_summary>');
    for (const r of firstRequests) expect(estimateTokens(r)).toBeLessThan(budget);
  });

  it('never separates a tool_use from its tool_result', () => {
    const { firstRequests } = runConversation(40, budget);
    for (const r of firstRequests) {
      const blocks = r.flatMap((m): Array<{ type: string }> => m.content);
      expect(blocks.filter((b) => b.type === 'tool_use').length).toBe(
        blocks.filter((b) => b.type === 'tool_result').length,
      );
    }
  });

  it('drops the turns a failed summary would have covered, and keeps sending the summary before them', () => {
    const all = runConversation(60, budget);
    const failing = runConversation(60, budget, { summaryFails: (k) => k === all.cutsAt[1] });
    const trimmedAt = all.cutsAt[1];
    const request = failing.firstRequests[trimmedAt];
    // the first summary, not a new one, then the turns the cut kept
    expect(firstText(request[0])).toContain(`up to version`);
    expect(request[0].content[0]).toEqual(failing.firstRequests[trimmedAt - 1][0].content[0]);
    expect(request.length).toBe(all.firstRequests[trimmedAt].length);
    expect(failing.cutsAt).toEqual(all.cutsAt.slice(0, failing.cutsAt.length));
  });

  it("takes the next turn's cut ahead, after the reply: the same requests as cutting before the next turn's first call", () => {
    for (const withTools of [true, false]) {
      const inline = runConversation(60, budget, { withTools });
      const ahead = runConversation(60, budget, { withTools, ahead: true });
      // every cut was taken by the turn before, once it had replied: no turn waited for one
      expect(ahead.cutsAt).toEqual([]);
      expect(ahead.aheadAt.map((k) => k + 1)).toEqual(inline.cutsAt);
      // and each turn sent what it would have sent (the summaries name other versions: the events come in another order)
      const normalised = (r: LlmMessage[][]) => JSON.stringify(r).replace(/up to version \d+/g, 'up to version N');
      expect(normalised(ahead.firstRequests)).toBe(normalised(inline.firstRequests));
    }
  });

  it('takes no cut ahead for a turn that did not reply, that cut already, or after which another turn started', () => {
    const { turns } = runConversation(12, budget);
    const last = turns.length - 1;
    const due = (ts: TurnRecord[]) => historyCutAhead(ts, ts.length - 1, 1_500);
    expect(due(turns)).toBeDefined(); // a small budget: a cut is due after the last turn
    expect(due([...turns.slice(0, last), { ...turns[last], ending: { type: 'TurnFailed' } }])).toBeUndefined();
    expect(due([...turns.slice(0, last), { ...turns[last], historyStart: { afterVersion: 1 } }])).toBeUndefined();
    const started = { ...turns[last], turnId: 'later', iterations: [turns[last].iterations[0]], ending: undefined };
    expect(historyCutAhead([...turns, started], last, 1_500)).toBeUndefined();
  });

  it("plans a cut only before the turn's first call, also in the always-retrieve plan", () => {
    const { firstRequests, cutsAt } = runConversation(30, 3_000, { withTools: false });
    expect(cutsAt.length).toBeGreaterThan(0);
    expect(firstRequests).toHaveLength(30);
  });
});

describe(historyCutOf.name, () => {
  it('covers the turns it leaves out, from the start of the summary before it when there is one', () => {
    // given three turns that replied, then the turn that cuts
    const first = turnsOf(
      ['a', 'b', 'c', 't'].flatMap((id) => (id === 't' ? [posted(id)] : [posted(id), replied(id)])),
    );
    const [a, b, c] = first;
    // when it cuts the first two
    const cut = historyCutOf(first, 't', { from: 0, to: 2 }, 100_000);
    // then the summary reads them, covering from the first question to the third's
    expect(cut).toEqual({
      previous: undefined,
      summarised: [a, b],
      coversVersions: [a.postedVersion, c.postedVersion - 1],
      droppedVersions: [a.postedVersion, c.postedVersion - 1],
    });

    // given a summary recorded by b, when t cuts b alone: the new summary takes the old one in
    const withSummary = turnsOf([
      posted('a'),
      replied('a'),
      posted('b'),
      e('HistorySummarized', { turnId: 'b', coversVersions: [1, 2], summary: 'earlier' }),
      replied('b'),
      posted('c'),
      replied('c'),
      posted('t'),
    ]);
    const again = historyCutOf(withSummary, 't', { from: 1, to: 2 }, 100_000);
    expect(again).toEqual({
      previous: { text: 'earlier', coversVersions: [1, 2] },
      summarised: [withSummary[1]],
      coversVersions: [1, withSummary[2].postedVersion - 1],
      droppedVersions: [withSummary[1].postedVersion, withSummary[2].postedVersion - 1],
    });
  });
});

describe(turnsStillNeeded.name, () => {
  it('lets go of the turns before the latest cut: the same requests as a fold of everything, with a bounded fold', () => {
    for (const withTools of [true, false]) {
      const whole = runConversation(80, 6_000, { withTools });
      const compacted = runConversation(80, 6_000, { withTools, compact: true });
      expect(JSON.stringify(compacted.firstRequests)).toBe(JSON.stringify(whole.firstRequests));
      expect(compacted.cutsAt).toEqual(whole.cutsAt);
      expect(whole.mostKept).toBe(80);
      // what the fold keeps is bounded by the budget (the window and the turns a cut summarises)
      expect(compacted.mostKept).toBeLessThan(whole.mostKept * 0.75);
      expect(compacted.mostKeptTokens).toBeLessThanOrEqual(6_000);
    }
  });

  it('keeps ended turns only as the messages histories send, and compacting again changes nothing', () => {
    const { turns } = runConversation(20, 6_000, { compact: true });
    expect(turns.every((t) => t.rendered?.withTools && t.iterations.length === 0)).toBe(true);
    expect(
      turns.some((t) => t.rendered?.withTools?.messages.some((m) => m.content.some((b) => b.type === 'tool_result'))),
    ).toBe(true);
    expect(turnsStillNeeded(turns, { historiesWithoutTools: false })).toBe(turns);
  });

  it('keeps every turn from the oldest one not ended, and at least three ended ones before it', () => {
    const { turns } = runConversation(40, 6_000, { compact: true });
    const later = turnsStillNeeded([...turns, ...turnsOf([posted('late')])]);
    expect(later[later.length - 1].turnId).toBe('late');
    expect(later.length).toBeGreaterThanOrEqual(4);
    const stuck = turnsOf([posted('a'), replied('a'), posted('b'), posted('c'), replied('c')]);
    // 'b' never ended: everything from it may still run, and before it at least three ended turns (here one)
    expect(turnsStillNeeded(stuck).map((t) => t.turnId)).toEqual(['a', 'b', 'c']);
  });

  it('keeps a whole conversation that has no cut yet (a log from before cuts): its first turn cuts it', () => {
    const turns = turnsOf(
      Array.from({ length: 50 }, (_, i) => [posted(`o${i}`, 'x'.repeat(600)), replied(`o${i}`)]).flat(),
    );
    expect(turnsStillNeeded(turns).length).toBe(50);
    const next = [...turns, ...turnsOf([posted('new')])];
    const context = { settings: { maxIterations: 5, budgetTokens: 6_000, retrievalMode: 'tools' as const } };
    expect(
      planTurn(next, 'new', { ...context, searchOffered: true, providerSupportsTools: true, deleted: false }),
    ).toMatchObject({
      kind: 'cut-history',
      from: 0,
    });
  });
});
