import { LlmMessage } from '../llm/llm.types';
import { buildHistory, estimateTokens, historyCutAhead, historyWindow, turnsStillNeeded } from './conversation-history';
import { citedPassages } from './citations';
import { CITATION_BLOCK, citationStartFor, nextRetrievalStep, nextStep } from './turn-plan';
import { evolveTurns, TurnEvent, TurnRecord, turnsOf } from './turn-records';

let version = 0;
const at = new Date('2026-11-22T10:00:00Z');
const e = (type: string, data: object): TurnEvent => ({ type, data, version: ++version, occurredAt: at }) as TurnEvent;
const posted = (turnId: string, content = `question ${turnId}`) =>
  e('UserMessagePosted', { messageId: `m-${turnId}`, turnId, content });
const invoked = (turnId: string, toolUseId: string, iteration = 1, assistantText?: string) =>
  e('ToolInvoked', { turnId, toolUseId, name: 'search_book', input: { query: 'q' }, iteration, assistantText });
const result = (turnId: string, toolUseId: string, chunks: Array<{ chunkId: string }> = [], citationStart = 1) =>
  e('ToolResultRecorded', { turnId, toolUseId, content: `result ${toolUseId}`, isError: false, chunks, citationStart });
const replied = (turnId: string, content = `answer ${turnId}`) =>
  e('AssistantReplied', { turnId, messageId: `a-${turnId}`, content });

describe(nextStep.name, () => {
  it('calls the LLM first, runs recorded calls without results, and stops once the turn ended', () => {
    expect(nextStep(turnsOf([posted('t1')]), 't1', 5)).toEqual({ kind: 'call-llm', iteration: 1, allowTools: true });
    const pending = turnsOf([posted('t1'), invoked('t1', 'a'), invoked('t1', 'b'), result('t1', 'a')]);
    expect(nextStep(pending, 't1', 5)).toMatchObject({ kind: 'run-tools', calls: [{ toolUseId: 'b' }] });
    const done = turnsOf([posted('t1'), invoked('t1', 'a'), result('t1', 'a')]);
    expect(nextStep(done, 't1', 5)).toEqual({ kind: 'call-llm', iteration: 2, allowTools: true });
    expect(nextStep(turnsOf([posted('t1'), replied('t1')]), 't1', 5)).toEqual({ kind: 'ended' });
    expect(nextStep(turnsOf([posted('t1')]), 'unknown', 5)).toEqual({ kind: 'ended' });
  });

  it('waits for an earlier unfinished turn', () => {
    expect(nextStep(turnsOf([posted('t1'), posted('t2')]), 't2', 5)).toEqual({
      kind: 'wait',
      forTurnId: 't1',
      behind: 1,
    });
    expect(nextStep(turnsOf([posted('t1'), posted('t2'), e('TurnCancelled', { turnId: 't1' })]), 't2', 5).kind).toBe(
      'call-llm',
    );
    // behind counts the open turns before it, not the ended ones
    const queue = turnsOf([posted('t1'), posted('t2'), replied('t2'), posted('t3'), posted('t4')]);
    expect(nextStep(queue, 't4', 5)).toEqual({ kind: 'wait', forTurnId: 't1', behind: 2 });
  });

  it('forbids tools on the last allowed call', () => {
    const turns = turnsOf([
      posted('t1'),
      invoked('t1', 'a', 1),
      result('t1', 'a'),
      invoked('t1', 'b', 2),
      result('t1', 'b'),
    ]);
    expect(nextStep(turns, 't1', 3)).toEqual({ kind: 'call-llm', iteration: 3, allowTools: false });
  });

  it('plans always-retrieve as reformulate, search, answer', () => {
    expect(nextRetrievalStep(turnsOf([posted('t1')]), 't1')).toEqual({ kind: 'reformulate' });
    expect(nextRetrievalStep(turnsOf([posted('t1'), invoked('t1', 'r')]), 't1').kind).toBe('run-tools');
    expect(nextRetrievalStep(turnsOf([posted('t1'), invoked('t1', 'r'), result('t1', 'r')]), 't1')).toEqual({
      kind: 'answer',
    });
  });
});

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

describe(citedPassages.name, () => {
  it('maps [n], [n, m] and [n-m] to the numbered chunks of the turn, each once', () => {
    const events = [
      posted('t1'),
      invoked('t1', 'a'),
      invoked('t1', 'b'),
      result('t1', 'a', [{ chunkId: 'c1' }, { chunkId: 'c2' }], 1),
      result('t1', 'b', [{ chunkId: 'c3' }], 1 + CITATION_BLOCK),
    ];
    const [turn] = turnsOf(events);
    expect(citationStartFor(turn, 'b')).toBe(1 + CITATION_BLOCK);
    const ids = (text: string) => citedPassages(text, turn).map((c) => c.chunkId);
    expect(ids('See [2] and [11].')).toEqual(['c2', 'c3']);
    expect(ids('See [1-2], [1, 11] and [99].')).toEqual(['c1', 'c2', 'c3']);
    expect(ids('No citation here.')).toEqual([]);
  });
});

describe(evolveTurns.name, () => {
  /** every turn, iteration, call list and result map of a fold, as a snapshot to compare later */
  const snapshot = (turns: TurnRecord[]) => JSON.stringify(turns, (_k, v) => (v instanceof Map ? [...v.entries()] : v));

  it('leaves the turns it is given as they were, so a kept fold can be read while later events apply', () => {
    const events = [posted('t1'), invoked('t1', 'a'), invoked('t1', 'b'), result('t1', 'a'), result('t1', 'b')];
    const steps: TurnRecord[][] = [[]];
    for (const ev of [...events, invoked('t1', 'c', 2), result('t1', 'c'), replied('t1'), posted('t2')])
      steps.push(evolveTurns(steps[steps.length - 1], ev));
    const before = steps.map(snapshot);
    // fold everything again from each intermediate state: none of them may change
    for (const s of steps)
      [replied('t2'), invoked('t1', 'd', 3), posted('t3')].reduce((t: TurnRecord[], ev) => evolveTurns(t, ev), s);
    expect(steps.map(snapshot)).toEqual(before);
    const last = steps[steps.length - 1];
    expect(last.map((t) => t.turnId)).toEqual(['t1', 't2']);
    expect(last[0].iterations.map((it) => it.calls.map((c) => c.toolUseId))).toEqual([['a', 'b'], ['c']]);
    expect(last[0].ending).toEqual({ type: 'AssistantReplied', content: 'answer t1' });
  });

  it('keeps on each turn the policy in force when it was posted', () => {
    const one = evolveTurns([], posted('t1'), { policy: { maxIterations: 2 } });
    const two = evolveTurns(evolveTurns(one, invoked('t1', 'a')), posted('t2'), {
      policy: { model: 'claude-haiku-4-5' },
    });
    expect(two.map((t) => t.policy)).toEqual([{ maxIterations: 2 }, { model: 'claude-haiku-4-5' }]);
    expect(evolveTurns([], posted('t3'), { policy: {} })[0].policy).toBeUndefined();
  });

  it('keeps untouched turns as the same objects, and returns the same array for an event about no turn', () => {
    const one = turnsOf([posted('t1'), replied('t1'), posted('t2')]);
    const two = evolveTurns(one, invoked('t2', 'x'));
    expect(two[0]).toBe(one[0]);
    expect(two[1]).not.toBe(one[1]);
    expect(one[1].iterations).toEqual([]);
    expect(evolveTurns(two, invoked('unknown', 'y'))).toBe(two);
    expect(evolveTurns(two, replied('t1', 'a second ending'))).toBe(two);
  });

  it('keeps the provider batch of each model call sent through the Message Batches API, the first one recorded', () => {
    const submitted = (step: string, providerBatchId: string) =>
      e('ModelBatchSubmitted', { turnId: 't1', step, provider: 'anthropic', providerBatchId });
    const turns = turnsOf([
      posted('t1'),
      submitted('t1/reply/1', 'msgbatch_a'),
      invoked('t1', 'x'),
      result('t1', 'x'),
      submitted('t1/reply/2', 'msgbatch_b'),
      submitted('t1/reply/2', 'msgbatch_again'),
    ]);
    expect(turns[0].modelBatches).toEqual({ 't1/reply/1': 'msgbatch_a', 't1/reply/2': 'msgbatch_b' });
    expect(turns[0].iterations).toHaveLength(1);
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
    let step = nextStep(turns, id, 5, { budgetTokens, withTools });
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
      step = nextStep(turns, id, 5, { budgetTokens, withTools });
    }
    expect(step).toEqual({ kind: 'call-llm', iteration: 1, allowTools: true });
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
    expect(nextStep(turns, id, 5, { budgetTokens, withTools }).kind).toBe('call-llm'); // no cut within a turn
    const second = buildHistory(turns, id, budgetTokens, { withTools });
    // the turn's second call sends the same history before the turn's own messages
    const earlier = first.messages.slice(0, first.prefixEnd + 1);
    expect(second.messages.slice(0, earlier.length)).toEqual(earlier);
    apply(
      ev('AssistantReplied', { turnId: id, messageId: `a${k}`, content: `answer ${k} ${'v'.repeat((k * 53) % 300)}` }),
    );
    // the cut the next turn would need, taken ahead by this one after its reply
    const ahead = opts.ahead ? historyCutAhead(turns, turns.length - 1, budgetTokens, withTools) : undefined;
    if (ahead) {
      aheadAt.push(k);
      apply(summarised(id, turns[ahead.to].postedVersion - 1));
      expect(historyCutAhead(turns, turns.length - 1, budgetTokens, withTools)).toBeUndefined();
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
    expect(nextStep(next, 'new', 5, { budgetTokens: 6_000, withTools: true })).toMatchObject({
      kind: 'cut-history',
      from: 0,
    });
  });
});
