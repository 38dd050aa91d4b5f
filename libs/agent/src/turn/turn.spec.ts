import { buildHistory, estimateTokens, turnsStillNeeded } from './conversation-history';
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

  it('drops whole old turns beyond the token budget, never half an exchange', () => {
    const events = [
      posted('t1', 'x'.repeat(4_000)),
      replied('t1'),
      posted('t2', 'short'),
      invoked('t2', 'a'),
      result('t2', 'a'),
      replied('t2'),
      posted('t3'),
    ];
    const turns = turnsOf(events);
    const full = buildHistory(turns, 't3', 100_000).messages;
    const cut = buildHistory(turns, 't3', estimateTokens(full) - 500).messages;
    expect(cut[0].content[0]).toMatchObject({ text: 'short' });
    const blocks = cut.flatMap((m): Array<{ type: string }> => m.content);
    const toolUses = blocks.filter((b) => b.type === 'tool_use').length;
    const results = blocks.filter((b) => b.type === 'tool_result').length;
    expect(toolUses).toBe(results);
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
    for (const s of steps) [replied('t2'), invoked('t1', 'd', 3), posted('t3')].reduce(evolveTurns, s);
    expect(steps.map(snapshot)).toEqual(before);
    const last = steps[steps.length - 1];
    expect(last.map((t) => t.turnId)).toEqual(['t1', 't2']);
    expect(last[0].iterations.map((it) => it.calls.map((c) => c.toolUseId))).toEqual([['a', 'b'], ['c']]);
    expect(last[0].ending).toEqual({ type: 'AssistantReplied', content: 'answer t1' });
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
});

describe(turnsStillNeeded.name, () => {
  /** n answered turns of varied sizes, some with a search, then `open` turns not yet answered */
  const conversation = (n: number, open: number): TurnEvent[] =>
    Array.from({ length: n + open }, (_, i) => {
      const id = `t${i}`;
      const asked = posted(id, `question ${i} ${'w'.repeat((i * 37) % 300)}`);
      if (i >= n) return [asked];
      const search = i % 3 === 0 ? [invoked(id, `s${i}`), result(id, `s${i}`)] : [];
      return [asked, ...search, replied(id, `answer ${i} ${'v'.repeat((i * 53) % 400)}`)];
    }).flat();

  it('lets go of old ended turns without changing any history a turn to come is sent', () => {
    const turns = turnsOf([...conversation(40, 2)]);
    const budget = 600;
    const kept = turnsStillNeeded(turns, budget);
    expect(kept.length).toBeLessThan(turns.length / 2);
    expect(kept.map((t) => t.turnId)).toEqual(turns.slice(turns.length - kept.length).map((t) => t.turnId));
    const later = [...turns, ...turnsOf([posted('next')])];
    const keptLater = [...kept, later[later.length - 1]];
    for (const withTools of [true, false])
      for (const id of ['t40', 't41', 'next']) {
        const all = id === 'next' ? later : turns;
        const some = id === 'next' ? keptLater : kept;
        expect(buildHistory(some, id, budget, { withTools })).toEqual(buildHistory(all, id, budget, { withTools }));
      }
  });

  it('keeps every turn from the oldest one not ended, and at least three ended ones before it', () => {
    const turns = turnsOf(conversation(10, 0));
    const unanswered = turnsOf([...conversation(10, 0), posted('late')]);
    expect(turnsStillNeeded(turns, 1).map((t) => t.turnId)).toEqual(['t7', 't8', 't9']);
    expect(turnsStillNeeded(unanswered, 1).map((t) => t.turnId)).toEqual(['t7', 't8', 't9', 'late']);
    const stuck = turnsOf([posted('a'), replied('a'), posted('b'), ...conversation(10, 0)]);
    expect(turnsStillNeeded(stuck, 1)).toBe(stuck); // 'b' never ended: everything after it may still run
  });

  /** 150 answered turns that each searched, with results ten times the size of question and answer; then 'next' */
  const searchedTurns = () => {
    const big = (i: number) =>
      e('ToolResultRecorded', { turnId: `t${i}`, toolUseId: `s${i}`, content: 'r'.repeat(2_000), isError: false });
    const events = Array.from({ length: 150 }, (_, i) => [
      posted(`t${i}`),
      invoked(`t${i}`, `s${i}`),
      big(i),
      replied(`t${i}`),
    ]).flat();
    return turnsOf([...events, posted('next')]);
  };

  it('keeps the turns only a history without tools reaches as question and answer, and lets the rest go', () => {
    const turns = searchedTurns();
    const budget = 3_000;
    const kept = turnsStillNeeded(turns, budget);
    const slim = kept.filter((t) => t.toolExchangesDropped);
    expect(slim.length).toBeGreaterThan(0);
    expect(kept.length - slim.length).toBeLessThan(10); // full records: the few a history with tools reaches
    expect(kept.length).toBeLessThan(turns.length);
    for (const withTools of [true, false])
      expect(buildHistory(kept, 'next', budget, { withTools })).toEqual(
        buildHistory(turns, 'next', budget, { withTools }),
      );
    // compacting again changes nothing: the same records, so their built messages are reused
    expect(turnsStillNeeded(kept, budget)).toBe(kept);
  });

  it('keeps no question-and-answer turns for a worker that only sends histories with tools', () => {
    const turns = searchedTurns();
    const budget = 3_000;
    const both = turnsStillNeeded(turns, budget);
    const toolsOnly = turnsStillNeeded(turns, budget, { historiesWithoutTools: false });
    expect(toolsOnly.some((t) => t.toolExchangesDropped)).toBe(false);
    expect(toolsOnly.length).toBeLessThan(both.length); // the slim records are what it saves
    expect(toolsOnly).toEqual(both.filter((t) => !t.toolExchangesDropped));
    expect(buildHistory(toolsOnly, 'next', budget)).toEqual(buildHistory(turns, 'next', budget));
  });

  it('returns the same array when the budget reaches every turn', () => {
    const turns = turnsOf(conversation(5, 1));
    expect(turnsStillNeeded(turns, 1_000_000)).toBe(turns);
  });
});
