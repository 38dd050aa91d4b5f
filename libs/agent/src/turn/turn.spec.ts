import { e, invoked, posted, replied, result } from '../../../../test/support/factories/turn-events';
import { citedPassages } from './citations';
import { CITATION_BLOCK, citationStartFor } from './turn-plan';
import { evolveTurns, TurnRecord, turnsOf } from './turn-fold';

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
