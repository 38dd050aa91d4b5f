import { e, invoked, posted, replied, result } from '../../../../test/support/factories/turn-events';
import { planTurn, TurnPlanContext, usesAlwaysRetrieve } from './turn-plan';
import { TurnEvent, turnsOf } from './turn-fold';

/** A conversation with a book, on a provider with tool use, in `auto` mode: the tool-use loop. */
const toolUse: TurnPlanContext = {
  settings: { maxIterations: 5, budgetTokens: 100_000, retrievalMode: 'auto' },
  searchOffered: true,
  providerSupportsTools: true,
  deleted: false,
};
const alwaysRetrieve: TurnPlanContext = {
  ...toolUse,
  settings: { ...toolUse.settings, retrievalMode: 'always-retrieve' },
};

/** given(events).when(turnId, context): the step planTurn names for that turn. */
const given = (...events: TurnEvent[]) => ({
  when: (turnId: string, context: TurnPlanContext = toolUse) => planTurn(turnsOf(events), turnId, context),
});

/** Three long turns that replied: with a budget of 1 000 tokens they outgrow the history's share. */
const longTurns = ['a', 'b', 'c'].flatMap((id) => [posted(id, 'q'.repeat(550)), replied(id, 'r'.repeat(550))]);
const small: TurnPlanContext = { ...toolUse, settings: { ...toolUse.settings, budgetTokens: 1_000 } };

describe(planTurn.name, () => {
  describe('the tool-use loop', () => {
    it('calls the model first, runs the calls recorded without results, then calls it again', () => {
      expect(given(posted('t1')).when('t1')).toEqual({ kind: 'call-llm', iteration: 1, allowTools: true });
      expect(given(posted('t1'), invoked('t1', 'a'), invoked('t1', 'b'), result('t1', 'a')).when('t1')).toEqual({
        kind: 'run-tools',
        iteration: 1,
        calls: [{ toolUseId: 'b', name: 'search_book', input: { query: 'q' } }],
      });
      expect(given(posted('t1'), invoked('t1', 'a'), result('t1', 'a')).when('t1')).toEqual({
        kind: 'call-llm',
        iteration: 2,
        allowTools: true,
      });
    });

    it('forbids tools on the last call the settings allow: it has to answer', () => {
      const twoCalls = [
        posted('t1'),
        invoked('t1', 'a', 1),
        result('t1', 'a'),
        invoked('t1', 'b', 2),
        result('t1', 'b'),
      ];
      const maxThree = { ...toolUse, settings: { ...toolUse.settings, maxIterations: 3 } };
      expect(given(...twoCalls).when('t1', maxThree)).toEqual({ kind: 'call-llm', iteration: 3, allowTools: false });
    });

    it('runs the loop in always-retrieve mode when the conversation offers no search', () => {
      expect(given(posted('t1')).when('t1', { ...alwaysRetrieve, searchOffered: false })).toMatchObject({
        kind: 'call-llm',
      });
    });
  });

  describe('the always-retrieve plan', () => {
    it('reformulates, searches, then answers, however many calls the settings allow', () => {
      const once = { ...alwaysRetrieve, settings: { ...alwaysRetrieve.settings, maxIterations: 1 } };
      expect(given(posted('t1')).when('t1', once)).toEqual({ kind: 'reformulate' });
      expect(given(posted('t1'), invoked('t1', 'r')).when('t1', once)).toMatchObject({ kind: 'run-tools' });
      expect(given(posted('t1'), invoked('t1', 'r'), result('t1', 'r')).when('t1', once)).toEqual({ kind: 'answer' });
    });

    it('is the plan in auto mode on a provider without tool use', () => {
      expect(given(posted('t1')).when('t1', { ...toolUse, providerSupportsTools: false })).toEqual({
        kind: 'reformulate',
      });
    });
  });

  describe('ending and waiting', () => {
    it('does nothing more for a turn that ended, an unknown turn, or a deleted conversation', () => {
      expect(given(posted('t1'), replied('t1')).when('t1')).toEqual({ kind: 'ended' });
      expect(given(posted('t1')).when('unknown')).toEqual({ kind: 'ended' });
      expect(given(posted('t1')).when('t1', { ...toolUse, deleted: true })).toEqual({ kind: 'ended' });
    });

    it('waits on the first earlier turn still open, counting the open ones before it', () => {
      expect(given(posted('t1'), posted('t2')).when('t2')).toEqual({ kind: 'wait', forTurnId: 't1', behind: 1 });
      const queue = [posted('t1'), posted('t2'), replied('t2'), posted('t3'), posted('t4')];
      expect(given(...queue).when('t4')).toEqual({ kind: 'wait', forTurnId: 't1', behind: 2 });
      expect(given(posted('t1'), posted('t2'), e('TurnCancelled', { turnId: 't1' })).when('t2').kind).toBe('call-llm');
    });
  });

  describe('history cuts', () => {
    it("cuts the history before the turn's first call, never within the turn", () => {
      const step = given(...longTurns, posted('d'), e('TurnFailed', { turnId: 'd' }), posted('t')).when('t', small);
      expect(step).toEqual({ kind: 'cut-history', from: 0, to: 2 });
      const started = [...longTurns, posted('t'), invoked('t', 'x'), result('t', 'x')];
      expect(given(...started).when('t', small)).toMatchObject({ kind: 'call-llm', iteration: 2 });
    });

    it('names the turn before when it replied without cutting: its job may still take the cut ahead', () => {
      expect(given(...longTurns, posted('t')).when('t', small)).toEqual({
        kind: 'cut-history',
        from: 0,
        to: 2,
        mayBeCutAheadBy: 'c',
      });
    });

    it('takes the cut the next turn would need ahead, once the turn replied', () => {
      const step = given(...longTurns).when('c', small);
      expect(step).toEqual({ kind: 'cut-history', from: 0, to: 2 });
      // and with the cut recorded, the turn has ended
      const cut = e('HistorySummarized', { turnId: 'c', coversVersions: [1, 4], summary: 'so far' });
      expect(given(...longTurns, cut).when('c', small)).toEqual({ kind: 'ended' });
    });

    it("takes no cut ahead for a batch's turn: its figures are final when the batch completes", () => {
      const link = { batchId: 'b1', conversationId: 'c1' };
      const batchTurn = e('UserMessagePosted', {
        messageId: 'm-c',
        turnId: 'c',
        content: 'q'.repeat(550),
        batch: link,
      });
      const events = [...longTurns.slice(0, 4), batchTurn, replied('c', 'r'.repeat(550))];
      expect(given(...events).when('c', small)).toEqual({ kind: 'ended' });
    });
  });

  describe('whole-book', () => {
    const wholeBook: TurnPlanContext = {
      ...toolUse,
      settings: { ...toolUse.settings, retrievalMode: 'whole-book' },
      wholeBook: true,
    };

    it('answers in one call with the book when the turn reads it, whatever the mode asked', () => {
      expect(given(posted('t1')).when('t1', wholeBook)).toEqual({ kind: 'answer-from-book', iteration: 1 });
      expect(given(posted('t1')).when('t1', { ...toolUse, wholeBook: true })).toEqual({
        kind: 'answer-from-book',
        iteration: 1,
      });
    });

    it('cuts a long history before the book is sent, counting it without tool exchanges', () => {
      const cut = given(...longTurns, posted('d')).when('d', { ...small, wholeBook: true });
      expect(cut).toMatchObject({ kind: 'cut-history' });
    });

    it('leaves turns of the modes stored before it exactly as they were planned (no wholeBook in their context)', () => {
      expect(given(posted('t1')).when('t1', toolUse)).toEqual({ kind: 'call-llm', iteration: 1, allowTools: true });
      expect(given(posted('t1')).when('t1', alwaysRetrieve)).toEqual({ kind: 'reformulate' });
    });

    it('searches as auto does when the book is not read whole: tools, or always-retrieve without tool use', () => {
      expect(given(posted('t1')).when('t1', { ...wholeBook, wholeBook: false })).toMatchObject({ kind: 'call-llm' });
      expect(usesAlwaysRetrieve('whole-book', false)).toBe(true);
      expect(usesAlwaysRetrieve('whole-book', true)).toBe(false);
    });
  });
});
